"""Reads of long-term memory. Scoping of what a caller may see lives here, once."""

from __future__ import annotations

from django.core.cache import cache
from django.db.models import Q, QuerySet

from memoryboard.ltm.config import get_agents_config
from memoryboard.ltm.namespaces import agent_prefix, build_namespace, parse_namespace, user_suffix
from memoryboard.models import LongTermMemory
from memoryboard.roles import can_read_all_memories, platform_user_id

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
    instead: one ``ORDER BY namespace LIMIT 1`` seek per agent, each starting past every namespace of
    the agent before (``["agent:x","user`` followed by a letter sorts after ``["agent:x","user:…``
    in binary and in Unicode collations alike).
    """
    cached = cache.get(AGENTS_CACHE_KEY)
    if cached is not None:
        return cached
    found: list[str] = []
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
        found.append(ns.agent)
        bound = agent_prefix(ns.agent) + '"userz'
    cache.set(AGENTS_CACHE_KEY, found, AGENTS_CACHE_SECONDS)
    return found


def forget_stored_agent_namespaces() -> None:
    """Called when an item is written under an agent namespace the cache may not know."""
    cache.delete(AGENTS_CACHE_KEY)


def known_agent_namespaces() -> list[tuple[str, str]]:
    """``(namespace, label)`` of the configured agents and of every agent found in the table."""
    choices = dict(configured_agent_namespaces())
    for ns in stored_agent_namespaces():
        choices.setdefault(ns, ns)
    return sorted(choices.items())


def user_namespaces(user_id: str, *, agents: list[str] | None = None) -> list[str]:
    """The namespace of one user's items under each agent (default: every known agent)."""
    if agents is None:
        agents = [ns for ns, _label in known_agent_namespaces()]
    return [build_namespace(agent_namespace=a, user_id=user_id).as_text() for a in agents]


def user_namespaces_q(user_id: str, *, agents: list[str] | None = None) -> Q:
    """Exactly one user's items: an indexed ``namespace IN`` (one per known agent) plus the suffix.

    The IN list lets the database seek ``idx_ltm_ns_archived`` instead of scanning a suffix LIKE over
    every row; the suffix check (``LIKE BINARY`` on MySQL) keeps the match exact where the column's
    collation would let ``=`` ignore case.
    """
    names = user_namespaces(user_id, agents=agents)
    return Q(namespace__in=names) & Q(namespace__endswith=user_suffix(user_id))


def user_term_q(term: str, *, agents: list[str] | None = None) -> Q:
    """The items of everyone a user filter means by ``term`` (a name, an e-mail or a platform id,
    see ``users.user_ids_matching``), each matched exactly by :func:`user_namespaces_q`."""
    from memoryboard.users import user_ids_matching

    q = Q(pk__in=[])
    for user_id in user_ids_matching(term):
        q |= user_namespaces_q(user_id, agents=agents)
    return q


def memory_queryset_for(user) -> QuerySet[LongTermMemory]:
    """Every item the caller may read: all for support and developers, their own for end users."""
    if not getattr(user, "is_authenticated", False):
        return LongTermMemory.objects.none()
    if can_read_all_memories(user):
        return LongTermMemory.objects.all()
    return own_memories(user_id=platform_user_id(user))


def own_scope_for(user) -> str | None:
    """The platform user id whose items are all the caller may read, or ``None`` when the caller may
    read every user's items (support, developers). Lets a search of one user's items skip the ORM
    (``ltm.retrieval.memory_search_own``); :func:`memory_queryset_for` is the same rule as a queryset."""
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

    ``user`` is a name, an e-mail or a platform user id (see :func:`user_term_q`).
    """
    if user:
        qs = qs.filter(user_term_q(str(user), agents=[agent] if agent else None))
    elif agent:
        qs = qs.filter(namespace__startswith=agent_prefix(agent))
    if memory_type:
        qs = qs.filter(value_json__type=str(memory_type).upper())
    if source:
        qs = qs.filter(value_json__source=source)
    if archived is not None:
        qs = qs.filter(archived=archived)
    if search:
        qs = qs.filter(Q(value_json__content__icontains=search) | Q(pk=search))
    return qs
