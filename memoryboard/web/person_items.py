"""The support desk's item list on a user page: every item of the person, in words, with edit, archive
(with a typed reason), restore and history in place (htmx; each action also works without JavaScript).

Reads (the list, its counts, the words for a state) come first; the views after them. The counts and the
list classify items with the same rule (:func:`state_q` / :func:`_state_of`), so they always agree.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memoryboard.ltm.store.items import MemoryError, memory_archive, memory_restore
from memoryboard.ltm.store.selectors import own_memories, user_namespaces_q
from memoryboard.ltm.store.states import OWN_STATE_REASONS, memory_state
from memoryboard.ltm.write.edits import memory_update
from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryFlag,
    MemoryState,
    MemoryStateChange,
    MemoryType,
)
from memoryboard.models.labels import reason_label
from memoryboard.models.namespaces import parse_namespace
from memoryboard.roles import can_change_any_memory, can_read_all_memories
from memoryboard.web.forms import SupportArchiveForm, SupportItemEditForm

PAGE_SIZE = 50
# The states a person's items can be in, in the order the page lists them (purged items are gone).
STATES = [
    MemoryState.ACTIVE, MemoryState.PAUSED, MemoryState.ARCHIVED, MemoryState.DELETED, MemoryState.SUPERSEDED,
    MemoryState.EXPIRED, MemoryState.PENDING_REVIEW, MemoryState.REJECTED,
]
_OWN_STATES = {str(r) for r in OWN_STATE_REASONS}


# --- reads ---------------------------------------------------------------------------------------------


def _paused_ids():
    return MemoryFlag.objects.filter(paused=True).values("memory_id")


def state_q(state: str) -> Q:
    """The items in ``state`` (as ``ltm.store.items.memory_state`` names it)."""
    if state == MemoryState.ACTIVE:
        return Q(archived=False) & ~Q(pk__in=_paused_ids())
    if state == MemoryState.PAUSED:
        return Q(archived=False, pk__in=_paused_ids())
    if state == MemoryState.DELETED:
        return Q(archived=True, archived_reason=ArchivedReason.USER_DELETED)
    if state in _OWN_STATES:
        return Q(archived=True, archived_reason=state)
    if state == MemoryState.ARCHIVED:
        return Q(archived=True) & (
            Q(archived_reason__isnull=True) | ~Q(archived_reason__in=[ArchivedReason.USER_DELETED, *_OWN_STATES])
        )
    return Q(pk__in=[])


def _state_of(archived: bool, reason: str | None, paused: bool) -> str:
    if not archived:
        return MemoryState.PAUSED if paused else MemoryState.ACTIVE
    if reason == ArchivedReason.USER_DELETED:
        return MemoryState.DELETED
    if reason in _OWN_STATES:
        return str(reason)
    return MemoryState.ARCHIVED


def _agent_of(namespace: str) -> str:
    ns = parse_namespace(namespace)
    return ns.agent if ns else ""


def person_items(*, user_id: str, agent: str = "", state: str = "") -> QuerySet[LongTermMemory]:
    """The person's items, newest change first, of one agent (its namespace name) and/or one state."""
    qs = (LongTermMemory.objects.filter(user_namespaces_q(str(user_id), agents=[agent]))
          if agent else own_memories(user_id=user_id))
    if state:
        qs = qs.filter(state_q(state))
    return qs.order_by("-updated_at", "-id")


def person_item_counts(*, user_id: str) -> dict[tuple[str, str], int]:
    """``(agent namespace name, state) → items``, by the rule the list filters with."""
    qs = own_memories(user_id=user_id)
    paused = set(qs.filter(archived=False, pk__in=_paused_ids()).values_list("pk", flat=True))
    counts: dict[tuple[str, str], int] = {}
    if paused:
        for row in qs.filter(pk__in=paused).values("namespace").annotate(n=Count("pk")).order_by():
            key = (_agent_of(row["namespace"]), MemoryState.PAUSED)
            counts[key] = counts.get(key, 0) + row["n"]
    for row in (qs.exclude(pk__in=paused).values("namespace", "archived", "archived_reason")
                .annotate(n=Count("pk")).order_by()):
        key = (_agent_of(row["namespace"]), _state_of(row["archived"], row["archived_reason"], False))
        counts[key] = counts.get(key, 0) + row["n"]
    return counts


def agent_labels() -> dict[str, str]:
    from memoryboard.web.my_memories import agent_labels as labels

    return labels()


def _when(value) -> str:
    return formats.date_format(timezone.localtime(value), "SHORT_DATETIME_FORMAT") if value else ""


def _agent_limit(namespace_agent: str) -> int | None:
    from memoryboard.agents_config import get_agents_config

    for cfg in get_agents_config().agents.values():
        if cfg.long_term_memory.namespace == namespace_agent:
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
        limit = _agent_limit(_agent_of(memory.namespace))
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
    if state in _OWN_STATES:
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
        namespace_agent = _agent_of(m.namespace)
        m.agent_label = agents.get(namespace_agent) or agents.get(m.agent_id or "") or namespace_agent
        m.state_text = state_words(m, state=m.state, change=last_change.get(m.pk), agent_label=m.agent_label)
        conversation = str((m.value_json or {}).get("conversationId") or "")
        m.conversation_url = (chat_url + "?" + urlencode({"conversation_id": conversation, "user": user_id})
                              if conversation else "")
        m.restorable = m.archived
    return memories


def item_history(memory: LongTermMemory) -> list[dict]:
    """The item's changes, newest first, in words: state changes and edits (old text → new text)."""
    from memoryboard.web.my_memories import _edit_history

    rows = [
        {"when": c.created_at, "by": c.actor.get_username() if c.actor_id else _("system"),
         "what": _("%(old)s → %(new)s") % {"old": _state_label(c.old_state), "new": _state_label(c.new_state)},
         "why": reason_label(c.reason), "before": "", "after": ""}
        for c in MemoryStateChange.objects.filter(memory_id=memory.pk).select_related("actor")
        .order_by("-created_at", "-id")[:50]
    ]
    rows += [{"when": e["when"], "by": e["by"], "what": _("Text changed"), "why": "", "before": e["before"],
              "after": e["after"]} for e in _edit_history(memory.pk)]
    created = AuditLog.objects.filter(object_type="memory", object_id=memory.pk,
                                      action=AuditLog.Action.CREATE).order_by("created_at").first()
    rows.append({"when": memory.created_at, "by": created.actor_text if created else "",
                 "what": _("Created"), "why": "", "before": "", "after": ""})
    return sorted(rows, key=lambda r: r["when"], reverse=True)


def _state_label(code: str) -> str:
    return str(MemoryState(code).label) if code in MemoryState.values else code


# --- views ---------------------------------------------------------------------------------------------


def _is_htmx(request) -> bool:
    return request.headers.get("HX-Request") == "true"


def _item(request, user_id: str, memory_id: str, *, change: bool) -> LongTermMemory:
    if not (can_change_any_memory(request.user) if change else can_read_all_memories(request.user)):
        raise PermissionDenied
    return get_object_or_404(own_memories(user_id=user_id), pk=memory_id)


def _row(request, user_id: str, memory: LongTermMemory, *, status: int = 200, **extra):
    memory = describe([LongTermMemory.objects.get(pk=memory.pk)], user_id=user_id)[0]
    return render(request, "web/person/_item_row.html", {
        "m": memory, "person_id": user_id, "can_change": can_change_any_memory(request.user),
        "memory_types": MemoryType.choices, **extra,
    }, status=status)


def _done(request, user_id: str, memory: LongTermMemory, message: str):
    if _is_htmx(request):
        return _row(request, user_id, memory, done=message)
    flash.success(request, message)
    return redirect(reverse("person", args=[user_id]) + f"#item-{memory.pk}")


@login_required
@require_http_methods(["GET", "POST"])
def person_item_edit(request, user_id: str, memory_id: str):
    """GET: the edit form in the row; POST: the new text and type (re-embedded, audited)."""
    memory = _item(request, user_id, memory_id, change=True)
    if request.method == "GET":
        form = SupportItemEditForm(initial={"content": memory.content, "memory_type": memory.memory_type})
        return _row(request, user_id, memory, edit_form=form)
    form = SupportItemEditForm(request.POST)
    if form.is_valid():
        try:
            memory_update(memory=memory, actor=request.user, content=form.cleaned_data["content"],
                                   memory_type=form.cleaned_data["memory_type"])
        except MemoryError as exc:
            form.add_error("content" if exc.field != "type" else "memory_type", _("The text is not valid."))
        else:
            return _done(request, user_id, memory, _("Saved. The agents now use the new text."))
    return _row(request, user_id, memory, edit_form=form, status=400)


@login_required
@require_POST
def person_item_archive(request, user_id: str, memory_id: str):
    """Archive with support's typed reason (required): kept in the audit log and the state history."""
    memory = _item(request, user_id, memory_id, change=True)
    form = SupportArchiveForm(request.POST)
    if not form.is_valid():
        return _row(request, user_id, memory, archive_form=form, status=400)
    memory_archive(memory=memory, actor=request.user, reason=ArchivedReason.STAFF,
                            note=form.cleaned_data["note"])
    return _done(request, user_id, memory, _("Archived: agents no longer use it."))


@login_required
@require_POST
def person_item_restore(request, user_id: str, memory_id: str):
    """Back to the state before archiving or deleting (a paused item comes back paused)."""
    memory = _item(request, user_id, memory_id, change=True)
    memory_restore(memory=memory, actor=request.user)
    return _done(request, user_id, memory, _("Restored: agents use it again."))


@login_required
@require_GET
def person_item_history(request, user_id: str, memory_id: str):
    """The item's history in words (the row's "History" expands it)."""
    memory = _item(request, user_id, memory_id, change=False)
    return render(request, "web/person/_item_history.html", {"m": memory, "history": item_history(memory)})
