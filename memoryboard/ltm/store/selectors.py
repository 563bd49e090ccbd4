"""Reads of long-term memory. Scoping of what a caller may see lives here, once."""

from __future__ import annotations

from django.core.cache import cache
from django.db.models import CharField, F, Func, Q, QuerySet
from django.db.models.lookups import In

from memoryboard.agents_config import get_agents_config
from memoryboard.models import LongTermMemory
from memoryboard.models.namespaces import (
    Namespace,
    agent_prefixes,
    build_namespace,
    first_element_end,
    namespace_spellings,
    parse_namespace,
)
from memoryboard.ltm.store.states import current_q
from memoryboard.roles import can_read_all_memories, platform_user_id
from memoryboard.users import user_ids_matching

AGENTS_CACHE_KEY = "memoryboard:stored-agent-namespaces"
AGENTS_CACHE_SECONDS = 300
MAX_STORED_AGENTS = 100


def configured_agent_namespaces() -> list[tuple[str, str]]:
    """``(namespace, label)`` of every agent in agents.yaml."""
    seen: dict[str, str] = {}
    for agent_id, cfg in get_agents_config().agents.items():
        ns = cfg.long_term_memory.namespace
        label = ns if ns == agent_id else f"{ns} ({agent_id})"
        seen.setdefault(ns, label)
    return sorted(seen.items())


def stored_agent_namespaces() -> list[str]:
    """The distinct agent namespaces in the memory table, found by index seeks (cached 5 minutes).

    A ``DISTINCT`` reads the whole namespace index (a million entries); this is a loose index scan
    instead: one ``ORDER BY namespace LIMIT 1`` seek per spelling of an agent element
    (``["agent:x"``, ``["agent:\\u4e2d"``, …), each starting past every namespace that begins with the
    spelling just found (``["agent:x"`` followed by ``~`` sorts after ``["agent:x",…`` and
    ``["agent:x", …`` and before ``["agent:x-y"…`` in binary and Unicode collations alike).
    """
    cached = cache.get(AGENTS_CACHE_KEY)
    if cached is not None:
        return cached
    found: dict[str, None] = {}
    bound = ""
    for _ in range(MAX_STORED_AGENTS):
        text = (
            LongTermMemory.objects.filter(namespace__gt=bound).order_by("namespace")
            .values_list("namespace", flat=True).first()
        )
        if text is None:
            break
        ns = parse_namespace(text)
        if ns is None:  # not a memories namespace: step past this one value
            bound = text
            continue
        found.setdefault(ns.agent)
        bound = text[:first_element_end(text)] + "~"  # past every text with this agent element's spelling
    agents = list(found)
    cache.set(AGENTS_CACHE_KEY, agents, AGENTS_CACHE_SECONDS)
    return agents


def forget_stored_agent_namespaces() -> None:
    """Called when an item is written under an agent namespace the cache may not know."""
    cache.delete(AGENTS_CACHE_KEY)


def known_agent_namespaces() -> list[tuple[str, str]]:
    """``(namespace, label)`` of the configured agents and of every agent found in the table."""
    choices = dict(configured_agent_namespaces())
    for ns in stored_agent_namespaces():
        choices.setdefault(ns, ns)
    return sorted(choices.items())


class _Binary(Func):
    """``BINARY namespace`` on MySQL/MariaDB, whose default collations compare case-insensitively (and
    so would let ``user:Bob`` match ``user:bob``); SQLite compares text exactly already."""

    template = "%(expressions)s"
    output_field = CharField()

    def as_mysql(self, compiler, connection, **extra):
        return super().as_sql(compiler, connection, template="BINARY %(expressions)s", **extra)


def user_namespaces(user_id: str, *, agents: list[str] | None = None) -> list[str]:
    """Every spelling of one user's namespace under each agent (default: every known agent).

    See :func:`memoryboard.models.namespaces.namespace_spellings`: compact and ``", "``-spaced, non-ASCII
    raw or ``\\uxxxx``/``\\uXXXX``-escaped; 2 texts per agent for ASCII ids and agents.
    """
    if agents is None:
        agents = [ns for ns, _label in known_agent_namespaces()]
    names: dict[str, None] = {}
    for agent in agents:
        names.update(dict.fromkeys(namespace_spellings(build_namespace(agent_namespace=agent, user_id=user_id))))
    return list(names)


def exact_text_q(field: str, values: list[str]) -> Q:
    """``field IN values`` byte for byte: an indexed ``IN`` re-checked with ``BINARY`` on MySQL, whose
    collations ignore case (user ``ABC`` is not user ``abc``)."""
    if not values:
        return Q(pk__in=[])
    return Q(**{f"{field}__in": values}) & Q(In(_Binary(F(field)), values))


def namespace_texts_q(texts: list[str]) -> Q:
    """Items whose namespace is exactly one of ``texts``: an indexed ``namespace IN`` (seeks of
    ``idx_ltm_ns_archived``) re-checked byte for byte (``BINARY`` on MySQL, where the column's
    collation would let ``IN`` ignore case)."""
    if not texts:
        return Q(pk__in=[])
    return Q(namespace__in=texts) & Q(In(_Binary(F("namespace")), texts))


def namespace_q(namespace: Namespace) -> Q:
    """One namespace's items, in every spelling (the item limit, dedup, retrieval use this)."""
    return namespace_texts_q(namespace_spellings(namespace))


def user_namespaces_q(user_id: str, *, agents: list[str] | None = None) -> Q:
    """Exactly one user's items, in every spelling: :func:`namespace_texts_q` of :func:`user_namespaces`.

    The IN list lets the database seek ``idx_ltm_ns_archived`` instead of scanning a suffix LIKE over
    every row (5 s at a million rows).
    """
    return namespace_texts_q(user_namespaces(str(user_id), agents=agents))


def agent_q(agent: str) -> Q:
    """One agent's items, in every spelling of its agent element: an indexed (case-insensitive on
    MySQL) prefix ``LIKE`` re-checked exactly (``LIKE BINARY``, which alone cannot use the index)."""
    prefixes = agent_prefixes(str(agent))
    indexed, exact = Q(), Q()
    for prefix in prefixes:
        indexed |= Q(namespace__istartswith=prefix)
        exact |= Q(namespace__startswith=prefix)
    return indexed & exact


def user_term_q(term: str, *, agents: list[str] | None = None) -> Q:
    """The items of everyone a user filter means by ``term`` (a name, an e-mail or a platform id,
    see ``users.user_ids_matching``), each matched exactly by :func:`user_namespaces_q`."""
    ids = user_ids_matching(term) or [str(term)]
    q = user_namespaces_q(ids[0], agents=agents)
    for user_id in ids[1:]:
        q |= user_namespaces_q(user_id, agents=agents)
    return q


def memory_queryset_for(user) -> QuerySet[LongTermMemory]:
    """Every item the caller may read: all for support and developers, their own for end users."""
    return memory_scope_for(user)[0]


def memory_scope_for(user) -> tuple[QuerySet[LongTermMemory], tuple]:
    """:func:`memory_queryset_for` and a hashable name of its SQL: equal names, equal SQL (a search
    compiles the candidates' SQL once per name, ``ltm.search.retrieval.memory_rank``'s ``scope_key``).

    An end user's name lists the namespace texts their items may have (every known agent's, which
    grows when an item is written under a new agent): a new text is a new name, never a stale SQL.
    """
    if not getattr(user, "is_authenticated", False):
        return LongTermMemory.objects.none(), ("no-item",)
    if can_read_all_memories(user):
        return LongTermMemory.objects.all(), ("every-item",)
    texts = user_namespaces(str(platform_user_id(user)))
    return LongTermMemory.objects.filter(namespace_texts_q(texts)), ("namespace-texts", *texts)


def own_scope_for(user) -> str | None:
    """The platform user id whose items are all the caller may read, or ``None`` when the caller may
    read every user's items (support, developers). Lets a search of one user's items skip the ORM
    (``ltm.search.retrieval.memory_search_own``); :func:`memory_queryset_for` is the same rule as a queryset."""
    if not getattr(user, "is_authenticated", False):
        raise PermissionError("not signed in")
    return None if can_read_all_memories(user) else platform_user_id(user)


def own_memories(*, user_id: str) -> QuerySet[LongTermMemory]:
    """One user's items under every known agent (see :func:`user_namespaces_q`)."""
    return LongTermMemory.objects.filter(user_namespaces_q(str(user_id)))


def filter_memories(
    qs: QuerySet[LongTermMemory],
    *,
    agent: str | None = None,
    user: str | None = None,
    memory_type: str | None = None,
    source: str | None = None,
    archived: bool | None = None,
    search: str | None = None,
) -> QuerySet[LongTermMemory]:
    """The filters shared by the admin, the API and "My memories".

    ``user`` is a name, an e-mail or a platform user id (see :func:`user_term_q`). ``archived=False``: the
    current items (``ltm.store.states.current_q``, what the platform and the agents use); ``True``: the others
    (archived, or past their expiry and not archived yet).
    """
    if user:
        qs = qs.filter(user_term_q(str(user), agents=[agent] if agent else None))
    elif agent:
        qs = qs.filter(agent_q(agent))
    if memory_type:
        qs = qs.filter(value_json__type=str(memory_type).upper())
    if source:
        qs = qs.filter(value_json__source=source)
    if archived is not None:
        qs = qs.filter(current_q() if not archived else ~current_q())
    if search:
        qs = qs.filter(Q(value_json__content__icontains=search) | Q(pk=search))
    return qs


def odd_namespace_texts(*, limit: int = 100_000) -> list[tuple[str, Namespace | None]]:
    """Stored namespace texts that no reader looks up: a memories namespace spelled in a way no known
    writer spells it (``[ "agent:chat" , …``, escaped ASCII, …), paired with what it parses to, and
    texts that are not a memories namespace at all (``None``).

    A loose index scan: one ``ORDER BY namespace LIMIT 1`` seek per distinct namespace text (a few
    seconds at a million rows), for ``manage.py respell_namespaces``, not for a request.
    """
    odd: list[tuple[str, Namespace | None]] = []
    bound: str | None = None
    for _ in range(limit):
        qs = LongTermMemory.objects.all() if bound is None else LongTermMemory.objects.filter(namespace__gt=bound)
        text = qs.order_by("namespace").values_list("namespace", flat=True).first()
        if text is None:
            break
        ns = parse_namespace(text)
        if ns is None or text not in namespace_spellings(ns):
            odd.append((text, ns))
        bound = text
    return odd
