"""Items described in words for the support desk: the state in a sentence, the agent and type by name, the
source conversation's address. The user page (``web.person_items``) and the admin's item page share it."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _, ngettext

from memoryboard.agents_config import agent_labels, get_agents_config
from memoryboard.ltm.store.states import OWN_STATE_REASONS, memory_state
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryFlag, MemoryState, MemoryStateChange, MemoryType
from memoryboard.models.namespaces import parse_namespace


def namespace_agent(namespace: str) -> str:
    """The agent part of a stored namespace (``""`` for a namespace of no known shape)."""
    ns = parse_namespace(namespace)
    return ns.agent if ns else ""


def _when(value) -> str:
    return formats.date_format(timezone.localtime(value), "SHORT_DATETIME_FORMAT") if value else ""


def _agent_limit(agent: str) -> int | None:
    for cfg in get_agents_config().agents.values():
        if cfg.long_term_memory.namespace == agent:
            return cfg.long_term_memory.max_items
    return None


def state_words(memory: LongTermMemory, *, state: str, change: MemoryStateChange | None, agent_label: str) -> str:
    """Why an item is not active, in a sentence: what, when, why (with the threshold or the limit)."""
    when = _when(memory.archived_at or (change.created_at if change else None))
    who = change.actor.get_username() if change and change.actor_id else ""
    if state == MemoryState.PAUSED:
        return _("Paused: kept, but agents do not use it.")
    if state == MemoryState.ACTIVE:
        return ""
    reason = memory.archived_reason
    if state == MemoryState.DELETED:
        return _("Deleted by the user on %(when)s; it can be restored until it is removed for good.") % {"when": when}
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
    if reason == ArchivedReason.STAFF:
        note = ""
        if change and change.reason.startswith(f"{ArchivedReason.STAFF}: "):
            note = change.reason[len(ArchivedReason.STAFF) + 2:]
        if who and note:
            return _("Archived by %(who)s on %(when)s: “%(why)s”") % {"who": who, "when": when, "why": note}
        if who:
            return _("Archived by %(who)s on %(when)s.") % {"who": who, "when": when}
        return _("Archived by staff on %(when)s.") % {"when": when}
    if state in OWN_STATE_REASONS:
        return _("%(state)s since %(when)s.") % {"state": MemoryState(state).label, "when": when}
    return _("Archived on %(when)s.") % {"when": when}


def describe(memories: list[LongTermMemory], *, user_id: str) -> list[LongTermMemory]:
    """Set what support reads on each row: labels of type, agent and state, the state in a sentence, the
    source conversation's address, and use (the item's own counter, as every page shows it)."""
    ids = [m.pk for m in memories]
    paused = set(MemoryFlag.objects.filter(memory_id__in=ids, paused=True).values_list("memory_id", flat=True))
    last_change: dict[str, MemoryStateChange] = {}
    for change in (MemoryStateChange.objects.filter(memory_id__in=ids).select_related("actor")
                   .order_by("-created_at", "-id")):
        last_change.setdefault(change.memory_id, change)
    agents, types = agent_labels(), dict(MemoryType.choices)
    chat_url = reverse("admin:memoryboard_chatmessage_changelist")
    for m in memories:
        m.state = memory_state(m, paused=m.pk in paused)
        m.state_label = MemoryState(m.state).label
        m.type_label = types.get(m.memory_type, m.memory_type or "")
        agent = namespace_agent(m.namespace)
        m.agent_label = agents.get(agent) or agents.get(m.agent_id or "") or agent
        m.state_text = state_words(m, state=m.state, change=last_change.get(m.pk), agent_label=m.agent_label)
        conversation = str((m.value_json or {}).get("conversationId") or "")
        m.conversation_url = (chat_url + "?" + urlencode({"conversation_id": conversation, "user": user_id})
                              if conversation else "")
        m.restorable = m.archived
    return memories
