"""Items described in words: the state by its name and in a sentence (who, when, why: from the stored state,
the state change's actor and its reason's details), the agent and type by name, the source conversation's
address. "My memories", the support desk's user page (``web.person_items``) and the admin's item page share
it: one vocabulary of states, in both languages."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _, gettext_lazy, ngettext

from memoryboard.agents_config import agent_labels, get_agents_config
from memoryboard.ltm.store.states import memory_state
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryFlag, MemoryState, MemoryStateChange, MemoryType
from memoryboard.models.labels import NOTE
from memoryboard.models.namespaces import parse_namespace
from memoryboard.roles import platform_user_id


def namespace_agent(namespace: str) -> str:
    """The agent part of a stored namespace (``""`` for a namespace of no known shape)."""
    ns = parse_namespace(namespace)
    return ns.agent if ns else ""


def _when(value) -> str:
    return formats.date_format(timezone.localtime(value), "SHORT_DATETIME_FORMAT") if value else ""


def _day(value) -> str:
    return formats.date_format(timezone.localtime(value), "SHORT_DATE_FORMAT") if value else ""


def _agent_limit(agent: str) -> int | None:
    for cfg in get_agents_config().agents.values():
        if cfg.long_term_memory.namespace == agent:
            return cfg.long_term_memory.max_items
    return None


# The states in the words a person reads, one place for every page (the user's "My memories", the support
# desk, the admin's item page): the owner reads "your", support reads "the user's".
STATE_TITLES = {
    MemoryState.ACTIVE: (gettext_lazy("Current"), gettext_lazy("Current")),
    MemoryState.PAUSED: (gettext_lazy("Paused"), gettext_lazy("Paused")),
    MemoryState.SUPERSEDED: (gettext_lazy("Replaced by a newer statement"), gettext_lazy("Replaced by a newer statement")),
    MemoryState.PENDING_REVIEW: (gettext_lazy("Waiting for your approval"), gettext_lazy("Waiting for the user's approval")),
    MemoryState.REJECTED: (gettext_lazy("Rejected"), gettext_lazy("Rejected")),
    MemoryState.EXPIRED: (gettext_lazy("Expired"), gettext_lazy("Expired")),
    MemoryState.ARCHIVED: (gettext_lazy("Archived"), gettext_lazy("Archived")),
    MemoryState.DELETED: (gettext_lazy("Deleted (restorable for a while)"), gettext_lazy("Deleted by the user")),
}


def state_title(state: str, *, own: bool = False) -> str:
    """A state's name as a section, filter or badge says it (``own``: to the item's owner)."""
    pair = STATE_TITLES.get(state)
    if pair is None:
        return str(MemoryState(state).label) if state in MemoryState.values else str(state)
    return str(pair[0] if own else pair[1])


def _by_owner(change: MemoryStateChange | None, owner: str) -> bool:
    return bool(change and change.actor_id and owner and platform_user_id(change.actor) == owner)


def state_words(memory: LongTermMemory, *, state: str, change: MemoryStateChange | None, agent_label: str,
                own: bool = False, owner: str = "") -> str:
    """Why an item is not current, in a sentence: what, when, who and why, from the stored state, the last
    state change's actor and its reason's details (the words support typed), never from a reason's text.
    ``own``: said to the item's owner ("you"); ``owner``: the owner's platform user id."""
    when = _when(memory.archived_at or (change.created_at if change else None))
    who = change.actor.get_username() if change and change.actor_id else ""
    by_owner = _by_owner(change, owner or (memory.user_id or ""))
    details = change.details if change and isinstance(change.details, dict) else {}
    if state == MemoryState.PAUSED:
        return _("Paused: kept, but agents do not use it.")
    if state == MemoryState.ACTIVE:
        return ""
    reason = memory.archived_reason
    if state == MemoryState.DELETED:
        until = _day(memory.archived_at + timedelta(days=settings.MEMORYBOARD_DELETED_RETENTION_DAYS)
                     if memory.archived_at else None)
        if own:
            return _("You deleted it on %(when)s; you can restore it until %(until)s.") % {"when": when, "until": until}
        return _("Deleted by the user on %(when)s; they can restore it until %(until)s, then it is removed for "
                 "good.") % {"when": when, "until": until}
    if state == MemoryState.SUPERSEDED:
        return _("Replaced on %(when)s by a newer statement; agents use the newer one.") % {"when": when}
    if state == MemoryState.PENDING_REVIEW:
        if own:
            return _("%(agent)s noted it on %(when)s and asks for your approval; agents do not use it until you "
                     "approve it.") % {"agent": agent_label, "when": _when(memory.created_at)}
        return _("%(agent)s noted it on %(when)s; it waits for the user's approval (or support's) before agents "
                 "use it.") % {"agent": agent_label, "when": _when(memory.created_at)}
    if state == MemoryState.REJECTED:
        if by_owner and own:
            return _("You rejected it on %(when)s; agents do not use it.") % {"when": when}
        if by_owner:
            return _("Rejected by the user on %(when)s; agents do not use it.") % {"when": when}
        if who:
            return _("Rejected by support (%(who)s) on %(when)s; agents do not use it.") % {"who": who, "when": when}
        return _("Rejected on %(when)s; agents do not use it.") % {"when": when}
    if state == MemoryState.EXPIRED:
        end = memory.expires_at or memory.archived_at
        return _("Expired on %(when)s; agents no longer use it.") % {"when": _when(end)}
    if reason == ArchivedReason.DECAY:
        min_access = settings.MEMORYBOARD_CLEANUP_MIN_ACCESS
        return ngettext(
            "Archived by the cleanup job on %(when)s: its relevance score was below %(threshold)s and agents "
            "had read it fewer than %(min)s time.",
            "Archived by the cleanup job on %(when)s: its relevance score was below %(threshold)s and agents "
            "had read it fewer than %(min)s times.", min_access,
        ) % {"when": when, "threshold": settings.MEMORYBOARD_CLEANUP_SCORE_THRESHOLD, "min": min_access}
    if reason == ArchivedReason.OVER_LIMIT:
        limit = _agent_limit(namespace_agent(memory.namespace))
        if limit:
            return _("Archived on %(when)s: %(agent)s keeps at most %(limit)s items per user, and this one "
                     "was among the least used.") % {"when": when, "agent": agent_label, "limit": limit}
        return _("Archived on %(when)s: over the agent's item limit.") % {"when": when}
    if reason == ArchivedReason.MERGED:
        return _("Merged into another item on %(when)s; agents use that one.") % {"when": when}
    if reason == ArchivedReason.STAFF:
        note = str(details.get(NOTE) or "")
        if own:
            if note:
                return _("Archived by support on %(when)s: “%(why)s”. Only support can bring it back; you can "
                         "delete it.") % {"when": when, "why": note}
            return _("Archived by support on %(when)s. Only support can bring it back; you can delete it.") % {
                "when": when}
        if who and note:
            return _("Archived by support (%(who)s) on %(when)s: “%(why)s”") % {"who": who, "when": when, "why": note}
        if who:
            return _("Archived by support (%(who)s) on %(when)s.") % {"who": who, "when": when}
        return _("Archived by support on %(when)s.") % {"when": when}
    return _("Archived on %(when)s.") % {"when": when}


def last_changes(ids) -> dict[str, MemoryStateChange]:
    """The latest state change of each item, in one query."""
    found: dict[str, MemoryStateChange] = {}
    for change in (MemoryStateChange.objects.filter(memory_id__in=list(ids)).select_related("actor")
                   .order_by("-created_at", "-id")):
        found.setdefault(change.memory_id, change)
    return found


def newer_statements(memories) -> dict[str, LongTermMemory]:
    """For replaced items, the statement that replaced each (``supersededBy``), same user only."""
    wanted = {m.superseded_by: m for m in memories if m.superseded_by}
    found = {}
    for newer in LongTermMemory.objects.filter(pk__in=list(wanted)):
        for m in memories:
            if m.superseded_by == newer.pk and m.user_id == newer.user_id:
                found[m.pk] = newer
    return found


def describe(memories: list[LongTermMemory], *, user_id: str, own: bool = False) -> list[LongTermMemory]:
    """Set what a person reads on each row: labels of type, agent and state, the state in a sentence, the
    statement that replaced it (``newer``), the source conversation's address, and use (the item's own
    counter, as every page shows it). ``own``: the reader is the owner (My memories)."""
    ids = [m.pk for m in memories]
    paused = set(MemoryFlag.objects.filter(memory_id__in=ids, paused=True).values_list("memory_id", flat=True))
    last_change = last_changes(ids)
    newer = newer_statements(memories)
    agents, types = agent_labels(), dict(MemoryType.choices)
    chat_url = reverse("admin:memoryboard_chatmessage_changelist")
    for m in memories:
        m.state = memory_state(m, paused=m.pk in paused)
        m.state_label = state_title(m.state, own=own)
        m.type_label = types.get(m.memory_type, m.memory_type or "")
        agent = namespace_agent(m.namespace)
        m.agent_label = agents.get(agent) or agents.get(m.agent_id or "") or agent
        m.state_text = state_words(m, state=m.state, change=last_change.get(m.pk), agent_label=m.agent_label,
                                   own=own, owner=user_id)
        m.newer = newer.get(m.pk)
        conversation = str((m.value_json or {}).get("conversationId") or "")
        m.conversation_url = (chat_url + "?" + urlencode({"conversation_id": conversation, "user": user_id})
                              if conversation else "")
        m.restorable = m.archived and m.state != MemoryState.PENDING_REVIEW
        m.pending = m.state == MemoryState.PENDING_REVIEW
    return memories
