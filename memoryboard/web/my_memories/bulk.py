"""Bulk actions on the user's items (delete, pause, resume), "delete all", and undo of a whole bulk delete."""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from memoryboard.agents_config import get_agents_config
from memoryboard.audit import audit_record
from memoryboard.ltm.store.items import (
    memory_delete_all_for_user,
    memory_delete_for_user,
    memory_restore_for_user,
    memory_set_paused,
)
from memoryboard.ltm.store.selectors import filter_memories, own_memories
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory
from memoryboard.models.audit import DELETE_BATCH
from memoryboard.roles import platform_user_id
from memoryboard.web.forms import MemoryBulkForm
from memoryboard.web.my_memories.common import (
    form_error,
    not_deleted,
    own_items,
    recently_deleted,
    retention_cutoff,
    with_labels,
    writes_own_memories,
)

MAX_BULK_ITEMS = 1000
BULK_SAMPLE = 5
# A bulk delete is one audit entry of object type DELETE_BATCH; its id is the batch that "undo" restores whole.


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
    return _bulk_confirmation(request, data, not_deleted(request), post_url=reverse("my-memories-delete-all"))


def _bulk_queryset(request, data: dict) -> QuerySet[LongTermMemory]:
    qs = own_items(request).filter(archived=False)
    if data["scope"] == "selected":
        return qs.filter(pk__in=data["ids"])

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
        "data": data, "count": qs.count(), "sample": with_labels(list(qs[:BULK_SAMPLE])),
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
        AuditLog.objects.filter(object_type=DELETE_BATCH, after__user_id=user_id, created_at__gte=retention_cutoff())
        .order_by("-created_at")[:20]
    )
    if not entries:
        return []
    wanted = {pk for e in entries for pk in e.after.get("ids", [])}
    still = set(
        own_memories(user_id=user_id).filter(
            pk__in=wanted, archived=True, archived_reason=ArchivedReason.USER_DELETED,
            archived_at__gte=retention_cutoff(),
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
        created_at__gte=retention_cutoff(),
    )
    with transaction.atomic():
        memories = list(
            recently_deleted(request).filter(pk__in=entry.after.get("ids", [])).select_for_update()
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
