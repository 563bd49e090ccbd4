""""My memories": an end user's own long-term memory items, and nobody else's.

Every view starts from :func:`own_memories` of the signed-in user's platform id, so an id in the URL that
belongs to someone else is a 404 and nothing changes.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count, Max, OuterRef, QuerySet, Subquery
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memoryboard.audit import audit_record
from memoryboard.ltm.people.user_data import memory_export_payload, user_data_erase
from memoryboard.ltm.store.items import (
    MemoryError,
    memory_delete_all_for_user,
    memory_delete_for_user,
    memory_restore_for_user,
    memory_set_paused,
)
from memoryboard.ltm.store.selectors import filter_memories, own_memories
from memoryboard.ltm.store.states import memory_state
from memoryboard.ltm.write.edits import memory_update
from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    ChatMessage,
    LongTermMemory,
    MemoryAccess,
    MemoryFlag,
    MemoryStateChange,
    MemoryType,
    PauseRule,
    Source,
    UserMemorySettings,
)
from memoryboard.models.audit import DELETE_BATCH
from memoryboard.models.namespaces import build_namespace
from memoryboard.roles import may_write_memories_of, platform_user_id
from memoryboard.web import data_erase
from memoryboard.web.forms import (
    MemoryAddForm,
    MemoryBulkForm,
    MemoryEditForm,
    MemorySearchForm,
    MemorySwitchForm,
    PauseRulesForm,
)

MAX_BULK_ITEMS = 1000
BULK_SAMPLE = 5
# Bands of a search hit's final score (ltm.search.ranking: 0.5 ≈ a close paraphrase, 0.3 ≈ related), in words.
CLOSE_MATCH = 0.5
RELATED_MATCH = 0.3
# A bulk delete is one audit entry of object type DELETE_BATCH; its id is the batch that "undo" restores whole.
# "Erase all my data" (below) has no undo; its reason in the audit log:
ERASE_REASON = "erase all my data"


def writes_own_memories(view):
    """A page that changes the signed-in user's own items: POSTs go through the one role rule
    (``roles.may_write_memories_of``), as the API, MCP and /v1 do."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method == "POST" and not may_write_memories_of(
                request.user, owner_user_id=platform_user_id(request.user)):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def form_error(form) -> str:
    """The first error of a form, named by the field's (translated) label."""
    field, errors = next(iter(form.errors.items()))
    if field == "__all__":
        return str(errors[0])
    return _("%(field)s: %(error)s") % {"field": form.fields[field].label or field, "error": errors[0]}


def _own(request) -> QuerySet[LongTermMemory]:
    return own_memories(user_id=platform_user_id(request.user))


def _retention_cutoff():
    return timezone.now() - timedelta(days=settings.MEMORYBOARD_DELETED_RETENTION_DAYS)


def _recently_deleted(request) -> QuerySet[LongTermMemory]:
    """The user's deletes that can still be undone (within the retention period)."""
    return _deleted(request).filter(archived_at__gte=_retention_cutoff())


def _deleted(request) -> QuerySet[LongTermMemory]:
    """Everything the user deleted and that is not purged yet (past the retention period: purged soon)."""
    return _own(request).filter(archived=True, archived_reason=ArchivedReason.USER_DELETED)


def _archived_by_others(request) -> QuerySet[LongTermMemory]:
    """The user's items that staff, decay or the item limit archived: shown with the reason, deletable,
    not restorable or editable by the user."""
    return _own(request).filter(archived=True).exclude(archived_reason=ArchivedReason.USER_DELETED)


def _not_deleted(request) -> QuerySet[LongTermMemory]:
    """What "delete" and "delete all" act on: every item of the user in every state but deleted."""
    return _own(request).exclude(archived=True, archived_reason=ArchivedReason.USER_DELETED)


def _semantic(queryset, query: str) -> list[tuple[LongTermMemory, float, float | None]]:
    """The ranked search (the one ranking function of long-term memory), best first: each item, its
    score and its relevance (``None`` for an item standing in for one it replaced)."""
    from memoryboard.ltm.search.retrieval import memory_search

    return [(hit.memory, hit.score, hit.parts.relevance if hit.parts else None)
            for hit in memory_search(queryset=queryset, query=query, k=20)]


def _usage(ids: list[str]) -> dict[str, dict]:
    """How often and when each item was used by an agent, in one query: the item's own counter
    (``access_count``, ``last_accessed_at``), the one source every page shows (the admin, the support
    desk), and the conversation of the latest logged use, if the access log has one."""
    if not ids:
        return {}
    latest = MemoryAccess.objects.filter(memory_id=OuterRef("pk")).order_by("-created_at", "-id")
    rows = (
        LongTermMemory.objects.filter(pk__in=ids, access_count__gt=0)
        .annotate(conversation=Subquery(latest.values("conversation_id")[:1]))
        .values("pk", "access_count", "last_accessed_at", "conversation")
    )
    return {row["pk"]: {"uses": row["access_count"], "last": row["last_accessed_at"],
                        "conversation": row["conversation"] or ""} for row in rows}


def _switch(user_id: str) -> UserMemorySettings:
    return UserMemorySettings.objects.filter(user_id=user_id).first() or UserMemorySettings(user_id=user_id)


def relevance_words(score: float | None, relevance: float | None = None) -> str:
    """A search hit's relevance in words for end users (raw cosine figures mean nothing to them); a hit
    whose relevance is below the minimum relevance (the assistant would not be given it) is "probably
    unrelated": the search lists the best hits whatever they score (docs/retrieval.md § Fusion)."""
    from memoryboard.ltm.search.ranking import MIN_RELEVANCE

    if score is None:
        return ""
    if relevance is not None and relevance < MIN_RELEVANCE:
        return _("probably unrelated")
    if score >= CLOSE_MATCH:
        return _("close match")
    if score >= RELATED_MATCH:
        return _("related")
    return _("loosely related")


@login_required
@require_GET
def memory_list(request):
    """The user's active items grouped by type (search results: one list, best first), the memory
    switch and recently deleted items, with "undo" for a whole bulk delete."""
    form = MemorySearchForm(request.GET or None)
    query = form.cleaned_data["q"].strip() if form.is_valid() else ""
    mode = (form.cleaned_data.get("mode") or "text") if form.is_valid() else "text"
    active = _own(request).filter(archived=False)
    scores: dict[str, float] = {}
    matches: dict[str, float | None] = {}
    if query and mode == "semantic":
        hits = _semantic(active, query)
        items = [memory for memory, _score, _match in hits]
        scores = {memory.pk: score for memory, score, _match in hits}
        matches = {memory.pk: match for memory, _score, match in hits}
    else:
        items = list(filter_memories(active, search=query or None).order_by("-updated_at")[:500])
    ids = [m.pk for m in items]
    paused = set(MemoryFlag.objects.filter(memory_id__in=ids, paused=True).values_list("memory_id", flat=True))
    usage = _usage(ids)
    user_id = platform_user_id(request.user)
    rules = _pause_rules(user_id)
    paused_types = {t for a, t in rules if t and not a}
    paused_agents = {a for a, t in rules if a and not t}
    for memory in _with_labels(items):
        memory.paused_by_rule = memory.memory_type in paused_types or memory.agent_namespace in paused_agents
        memory.is_paused = memory.pk in paused
        memory.usage = usage.get(memory.pk)
        memory.score = scores.get(memory.pk)
        memory.relevance = relevance_words(memory.score, matches.get(memory.pk))
    groups = []
    if not query:  # search results stay in their ranked order, not regrouped by type
        for value, label in MemoryType.choices:
            group = [m for m in items if m.memory_type == value]
            if group:
                groups.append({"type": value, "label": label, "items": group})
        others = [m for m in items if m.memory_type not in MemoryType.values]
        if others:
            groups.append({"type": "OTHER", "label": _("Other"), "items": others})
    switch = _switch(user_id)
    deleted = list(filter_memories(_deleted(request), search=query or None).order_by("-archived_at")[:200])
    retention = settings.MEMORYBOARD_DELETED_RETENTION_DAYS
    cutoff = _retention_cutoff()
    for memory in _with_labels(deleted):
        memory.purge_at = memory.archived_at + timedelta(days=retention)
        memory.can_undo = memory.archived_at >= cutoff
    reasons = dict(ArchivedReason.choices)
    # The search box filters every section (by words; a search by meaning ranks the active items only).
    archived = _with_labels(list(filter_memories(_archived_by_others(request), search=query or None)
                                 .order_by("-archived_at")[:200]))
    for memory in archived:
        memory.reason_label = reasons.get(memory.archived_reason, memory.archived_reason or _("Archived"))
    batches = deleted_batches(user_id=user_id)
    just_deleted = next((b for b in batches if b["id"] == request.GET.get("deleted")), None)
    undo_item = next((m for m in deleted if m.pk == request.GET.get("undo") and m.can_undo), None)
    context = {
        "form": form,
        "query": query,
        "mode": mode,
        "groups": groups,
        "results": items if query else [],
        "total": len(items),
        "deleted": deleted,
        "batches": batches,
        "just_deleted": just_deleted,
        "undo_item": undo_item,
        "memory_off": {"use": switch.use_memories, "save": switch.save_memories},
        "archived": archived,
        "retention_days": retention,
        "add_form": MemoryAddForm(),
        "pause_form": PauseRulesForm(initial={"types": sorted(paused_types), "agents": sorted(paused_agents)}),
        "bulk_form": MemoryBulkForm(initial={"q": query}),
        "switch_form": MemorySwitchForm(
            initial={"use_memories": switch.use_memories, "save_memories": switch.save_memories}
        ),
    }
    return render(request, "web/my_memories.html", context)


@login_required
@writes_own_memories
@require_POST
def memory_delete(request, memory_id: str):
    """Delete one of the user's items, active, paused or archived by staff, decay or the limit (kept for the
    retention period, with undo), then purged."""
    memory = get_object_or_404(_not_deleted(request), pk=memory_id)
    memory_delete_for_user(memory=memory, actor=request.user)
    # Undo where the delete happened: the page opens on a bar naming the item, with its Undo button.
    return redirect(reverse("my-memories") + "?" + urlencode({"undo": memory.pk}) + "#undo-bar")


@login_required
@writes_own_memories
@require_POST
def memory_restore(request, memory_id: str):
    """Undo a delete within the retention period."""
    memory = get_object_or_404(_recently_deleted(request), pk=memory_id)
    memory_restore_for_user(memory=memory, actor=request.user)
    flash.success(request, _("Memory restored."))
    return redirect("my-memories")


@login_required
@writes_own_memories
@require_http_methods(["GET", "POST"])
def memory_delete_all(request):
    """"Delete all": GET is the confirmation page (the count and a sample of everything stored about the
    user, in every state); the confirmation POSTs here and deletes all of it in one transaction
    (restorable during the retention period, then purged): with the earlier deletes, exactly the export."""
    if request.method == "POST":
        user_id = platform_user_id(request.user)
        with transaction.atomic():  # the batch lists exactly what this delete changed: undo restores it whole
            ids = memory_delete_all_for_user(user_id=user_id, actor=request.user)
            batch = _record_batch(ids, request.user, user_id)
        if batch:
            return redirect(reverse("my-memories") + "?" + urlencode({"deleted": batch}))
        flash.success(request, _("Nothing to delete."))
        return redirect("my-memories")
    data = {"action": "delete", "scope": "filter", "ids": [], "memory_type": "", "agent": "", "q": ""}
    return _bulk_confirmation(request, data, _not_deleted(request), post_url=reverse("my-memories-delete-all"))


@login_required
@require_GET
def memory_export(request):
    """Everything stored about the user as a JSON download: all items (archived and deleted ones flagged),
    conversations and the other tables, exactly what "Erase all my data" removes."""
    body = json.dumps(memory_export_payload(user_id=platform_user_id(request.user)), ensure_ascii=False, indent=2)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="my-data.json"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def my_data_erase(request):
    """"Erase all my data": GET lists what goes, by kind, and says there is no undo; the POST with the box
    ticked erases it all in one transaction (``user_data.user_data_erase``); without it, a 400 naming
    the box, and nothing changes."""
    user_id = platform_user_id(request.user)
    page = {"user_id": user_id, "own": True, "post_url": reverse("my-data-erase"), "cancel_url": reverse("my-memories")}
    if request.method == "POST":
        if not data_erase.confirmed(request):
            return data_erase.erase_page(request, **page, error=data_erase.not_confirmed_error(), status=400)
        user_data_erase(user_id=user_id, actor=request.user, reason=ERASE_REASON)
        flash.success(request, _("Everything stored about you was erased. It cannot be restored."))
        return redirect("my-memories")
    return data_erase.erase_page(request, **page)


@login_required
@require_POST
def memory_switch(request):
    """The memory switch: "use my memories" (retrieval, injection) and "save new memories" (extraction, tools)."""
    form = MemorySwitchForm(request.POST)
    form.is_valid()  # two optional booleans: always valid
    UserMemorySettings.objects.update_or_create(
        user_id=platform_user_id(request.user),
        defaults={
            "use_memories": form.cleaned_data["use_memories"],
            "save_memories": form.cleaned_data["save_memories"],
            "updated_at": timezone.now(),
        },
    )
    flash.success(request, _("Memory settings saved."))
    return redirect("my-memories")


def _set_paused(request, memory_id: str, paused: bool):
    memory = get_object_or_404(_own(request).filter(archived=False), pk=memory_id)
    memory_set_paused(memory=memory, actor=request.user, paused=paused)
    flash.success(request, _("Memory paused: agents will not use it.") if paused else _("Memory resumed."))
    return redirect("my-memories")


@login_required
@require_POST
def memory_pause(request, memory_id: str):
    """Keep an item but stop agents from using it."""
    return _set_paused(request, memory_id, True)


@login_required
@require_POST
def memory_resume(request, memory_id: str):
    return _set_paused(request, memory_id, False)


@login_required
@writes_own_memories
@require_POST
def memory_add(request):
    """Manual add: the user writes an item for one of the agents; embedded on save, ``source="manual"``."""
    form = MemoryAddForm(request.POST)
    if form.is_valid():
        from memoryboard.agents_config import get_agents_config

        agent_id = form.cleaned_data["agent"]
        config = get_agents_config().get(agent_id)
        from memoryboard.ltm.write.reconcile import memory_save_reconciled

        try:
            memory_save_reconciled(
                namespace=build_namespace(agent_namespace=config.long_term_memory.namespace,
                                          user_id=platform_user_id(request.user)),
                content=form.cleaned_data["content"],
                memory_type=form.cleaned_data["memory_type"],
                source=Source.MANUAL,
                agent_id=agent_id,
                actor=request.user,
            )
        except MemoryError as exc:
            flash.error(request, f"{exc.field}: {exc.message}" if exc.field else exc.message)
        else:
            flash.success(request, _("Memory added."))
    else:
        flash.error(request, form_error(form))
    return redirect("my-memories")


def _bulk_queryset(request, data: dict) -> QuerySet[LongTermMemory]:
    qs = _own(request).filter(archived=False)
    if data["scope"] == "selected":
        return qs.filter(pk__in=data["ids"])
    from memoryboard.agents_config import get_agents_config

    config = get_agents_config().get(data["agent"]) if data["agent"] else None
    return filter_memories(
        qs,
        memory_type=data["memory_type"] or None,
        agent=(config.long_term_memory.namespace if config else data["agent"]) or None,
        search=data["q"] or None,
    )


def _bulk_confirmation(request, data: dict, qs: QuerySet[LongTermMemory], *, post_url: str | None = None):
    qs = qs.order_by("-updated_at", "id")
    return render(request, "web/my_memories_bulk.html", {
        "post_url": post_url or reverse("my-memories-bulk"),
        "data": data, "count": qs.count(), "sample": _with_labels(list(qs[:BULK_SAMPLE])),
        "action_label": dict(MemoryBulkForm.ACTIONS)[data["action"]],
        "retention_days": settings.MEMORYBOARD_DELETED_RETENTION_DAYS,
        "delete_all": post_url == reverse("my-memories-delete-all"),
    })


def _bulk_apply(action: str, memories: list[LongTermMemory], actor, user_id: str) -> str | None:
    """Apply a bulk action; a delete is recorded as one batch (returned) that "undo" restores whole."""
    for memory in memories:
        if action == "delete":
            memory_delete_for_user(memory=memory, actor=actor)
        else:
            memory_set_paused(memory=memory, actor=actor, paused=action == "pause")
    if action != "delete":
        return None
    return _record_batch([m.pk for m in memories], actor, user_id)


def _record_batch(ids: list[str], actor, user_id: str) -> str | None:
    """One audit entry naming the items a bulk delete (or "delete all") deleted: the batch "undo" restores."""
    if not ids:
        return None
    batch = uuid.uuid4().hex
    audit_record(
        actor=actor, action=AuditLog.Action.BULK, object_type=DELETE_BATCH, object_id=batch,
        after={"user_id": user_id, "ids": ids}, reason=ArchivedReason.USER_DELETED,
    )
    return batch


def deleted_batches(*, user_id: str) -> list[dict]:
    """The user's bulk deletes within the retention period that can still be undone, newest first:
    ``{"id", "when", "count"}`` where ``count`` is how many of the batch's items are still deleted."""
    entries = list(
        AuditLog.objects.filter(object_type=DELETE_BATCH, after__user_id=user_id, created_at__gte=_retention_cutoff())
        .order_by("-created_at")[:20]
    )
    if not entries:
        return []
    wanted = {pk for e in entries for pk in e.after.get("ids", [])}
    still = set(
        own_memories(user_id=user_id).filter(
            pk__in=wanted, archived=True, archived_reason=ArchivedReason.USER_DELETED,
            archived_at__gte=_retention_cutoff(),
        ).values_list("pk", flat=True)
    )
    out = []
    for entry in entries:
        count = sum(1 for pk in entry.after.get("ids", []) if pk in still)
        if count:
            out.append({"id": entry.object_id, "when": entry.created_at, "count": count})
    return out


@login_required
@writes_own_memories
@require_POST
def memory_undo_batch(request, batch_id: str):
    """Undo a whole bulk delete ("delete all" included) in one step, within the retention period.

    Only the batch's items that are still deleted by the user come back, each to its state before (a paused
    item comes back paused); one transaction."""
    user_id = platform_user_id(request.user)
    entry = get_object_or_404(
        AuditLog, object_type=DELETE_BATCH, object_id=batch_id, after__user_id=user_id,
        created_at__gte=_retention_cutoff(),
    )
    with transaction.atomic():
        memories = list(
            _recently_deleted(request).filter(pk__in=entry.after.get("ids", [])).select_for_update()
        )
        # Each back to its state before (active, paused, or archived by others), with its own audit entry
        # (no second entry for the batch: one entry per thing that happened).
        for memory in memories:
            memory_restore_for_user(memory=memory, actor=request.user)
    flash.success(request, ngettext("%(n)s memory restored.", "%(n)s memories restored.", len(memories))
                  % {"n": len(memories)})
    return redirect("my-memories")


@login_required
@writes_own_memories
@require_POST
def memory_bulk(request):
    """Bulk delete / pause / resume of the user's own items: first a confirmation with the count and a
    sample, then (``confirm``) one transaction."""
    form = MemoryBulkForm(request.POST)
    if not form.is_valid():
        flash.error(request, form_error(form))
        return redirect("my-memories")
    data = form.cleaned_data
    qs = _bulk_queryset(request, data).order_by("-updated_at", "id")
    count = qs.count()
    if count > MAX_BULK_ITEMS:
        flash.error(request, ngettext(
            "%(count)s memory is selected; one action changes at most %(max)s at once: narrow the search.",
            "%(count)s memories are selected; one action changes at most %(max)s at once: narrow the search.",
            count) % {"count": count, "max": MAX_BULK_ITEMS})
        return redirect("my-memories")
    if not data["confirm"]:
        return _bulk_confirmation(request, data, qs)
    with transaction.atomic():
        memories = list(qs.select_for_update())
        batch = _bulk_apply(data["action"], memories, request.user, platform_user_id(request.user))
    if batch:  # the page says what was deleted and offers to undo it whole, in one click
        return redirect(reverse("my-memories") + "?" + urlencode({"deleted": batch}))
    n = len(memories)
    done = {
        "delete": ngettext("%(n)s memory deleted. You can undo this under \"Recently deleted\".",
                           "%(n)s memories deleted. You can undo this under \"Recently deleted\".", n),
        "pause": ngettext("%(n)s memory paused.", "%(n)s memories paused.", n),
        "resume": ngettext("%(n)s memory resumed.", "%(n)s memories resumed.", n),
    }[data["action"]]
    flash.success(request, done % {"n": n})
    return redirect("my-memories")


ACCESS_PAGE_SIZE = 20


def _edit_history(memory_id: str) -> list[dict]:
    """The item's earlier texts, newest first, from the audit log's before/after of each edit."""
    entries = AuditLog.objects.filter(
        object_type="memory", object_id=memory_id, action=AuditLog.Action.UPDATE
    ).order_by("-created_at", "-id")[:50]
    out = []
    for entry in entries:
        before = ((entry.before or {}).get("value_json") or {}).get("content")
        after = ((entry.after or {}).get("value_json") or {}).get("content")
        if before is not None and before != after:
            out.append({"when": entry.created_at, "before": before, "after": after, "by": entry.actor_label})
    return out


def _editable(request) -> QuerySet[LongTermMemory]:
    """What an owner may edit: their items that are not archived (active or paused)."""
    return _own(request).filter(archived=False)


@login_required
@require_GET
def memory_detail(request, memory_id: str):
    """One of the user's items: edit its text, its source conversation, its access log (paginated), its
    earlier texts and its state history."""
    memory = get_object_or_404(_own(request), pk=memory_id)
    return _detail(request, memory, MemoryEditForm(initial={"content": memory.content}))


def _detail(request, memory: LongTermMemory, edit_form: MemoryEditForm, status: int = 200):
    page = Paginator(MemoryAccess.objects.filter(memory_id=memory.pk).order_by("-created_at", "-id"),
                     ACCESS_PAGE_SIZE).get_page(request.GET.get("page"))
    memory = _with_labels([memory])[0]
    agents = agent_labels()
    for access in page:
        access.agent_label = agents.get(access.agent_id, access.agent_id)
    usage = _usage([memory.pk]).get(memory.pk)
    return render(request, "web/my_memory_detail.html", {
        "memory": memory,
        "state": memory_state(memory),
        "accesses": page,
        "usage": usage,
        "conversation_of_last_use": bool(usage and usage["conversation"]) and _own_messages(request).filter(
            conversation_id=usage["conversation"]).exists(),
        "history": MemoryStateChange.objects.filter(memory_id=memory.pk).order_by("-created_at", "-id")[:50],
        "edits": _edit_history(memory.pk),
        "edit_form": edit_form if not memory.archived else None,
        "conversation_visible": bool(memory.conversation_id) and _own_messages(request).filter(
            conversation_id=memory.conversation_id).exists(),
    }, status=status)


@login_required
@writes_own_memories
@require_POST
def memory_edit(request, memory_id: str):
    """Change an item's text: re-embedded and audited; the previous text stays in its history."""
    memory = get_object_or_404(_editable(request), pk=memory_id)
    form = MemoryEditForm(request.POST)
    if form.is_valid():
        try:
            memory_update(memory=memory, actor=request.user, content=form.cleaned_data["content"])
        except MemoryError as exc:
            form.add_error("content", exc.message)
        else:
            flash.success(request, _("Memory changed. The agents now use the new text."))
            return redirect("my-memories-detail", memory_id=memory.pk)
    return _detail(request, memory, form, status=400)


def _own_messages(request) -> QuerySet[ChatMessage]:
    """The signed-in user's own stored messages (never someone else's, whatever their role)."""
    return ChatMessage.objects.filter(user_id=platform_user_id(request.user))


CONVERSATION_PAGE_SIZE = 100


@login_required
@require_GET
def conversation_detail(request, conversation_id: str):
    """One of the user's own conversations, read-only: where a memory came from."""
    rows = _own_messages(request).filter(conversation_id=conversation_id).order_by("id")
    page = Paginator(rows, CONVERSATION_PAGE_SIZE).get_page(request.GET.get("page"))
    if not page.object_list:
        raise Http404(_("No such conversation."))
    first = rows.first()
    from memoryboard.web.conversation_turns import describe_turns

    describe_turns(page.object_list)
    return render(request, "web/my_conversation.html", {
        "conversation_id": conversation_id,
        "agent_label": agent_labels().get(first.agent_id, first.agent_id),
        "messages_page": page,
        "memories": _with_labels(list(
            _own(request).filter(archived=False, value_json__conversationId=conversation_id).order_by("-updated_at")[:50]
        )),
    })


def agent_labels() -> dict[str, str]:
    """Display names of the agents (``name`` in agents.yaml), by agent id and by memory namespace."""
    from memoryboard.agents_config import get_agents_config

    labels: dict[str, str] = {}
    for agent_id, cfg in sorted(get_agents_config().agents.items()):
        labels[agent_id] = cfg.label
        labels.setdefault(cfg.long_term_memory.namespace, cfg.label)
    return labels


def source_words(source: str, agent: str) -> str:
    """Where an item came from, in plain words for its owner."""
    if source == Source.AUTO_EXTRACT:
        return _("noted by %(agent)s from a chat") % {"agent": agent}
    if source == Source.AGENT_TOOL:
        return _("saved by %(agent)s during a chat") % {"agent": agent}
    if source == Source.MANUAL:
        return _("added by you for %(agent)s") % {"agent": agent}
    return dict(Source.choices).get(source, source) if source else _("origin unknown")


def _with_labels(memories: list[LongTermMemory]) -> list[LongTermMemory]:
    """Set what an end user reads instead of stored codes: ``type_label``, ``agent_label`` (the agent's
    display name), ``source_label`` (in words) and ``conversation_id`` (the source conversation, if known)."""
    types, agents = dict(MemoryType.choices), agent_labels()
    for memory in memories:
        memory.type_label = types.get(memory.memory_type, memory.memory_type)
        agent = memory.agent_id or memory.agent_namespace or ""
        memory.agent_label = agents.get(agent) or agents.get(memory.agent_namespace or "") or agent or _("an agent")
        memory.source_label = source_words(memory.source, memory.agent_label)
        memory.conversation_id = str((memory.value_json or {}).get("conversationId") or "")
    return memories


def _pause_rules(user_id: str) -> list[tuple[str, str]]:
    return list(PauseRule.objects.filter(user_id=user_id).values_list("agent_namespace", "memory_type"))


@login_required
@require_POST
def memory_pause_rules(request):
    """Replace the user's pause rules: whole types and whole agents that retrieval skips."""
    form = PauseRulesForm(request.POST)
    if not form.is_valid():
        flash.error(request, form_error(form))
        return redirect("my-memories")
    user_id = platform_user_id(request.user)
    wanted = [("", t) for t in form.cleaned_data["types"]] + [(a, "") for a in form.cleaned_data["agents"]]
    with transaction.atomic():
        before = _pause_rules(user_id)
        PauseRule.objects.filter(user_id=user_id).delete()
        PauseRule.objects.bulk_create(
            [PauseRule(user_id=user_id, agent_namespace=a, memory_type=t) for a, t in wanted]
        )
        audit_record(
            actor=request.user, action=AuditLog.Action.PAUSE, object_type="pause_rules", object_id=user_id,
            before=[list(rule) for rule in before], after=[list(rule) for rule in wanted],
        )
    flash.success(request, _("Pause settings saved."))
    return redirect("my-memories")
