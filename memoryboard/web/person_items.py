"""The support desk's item list on a user page: every item of the person, in words, with edit, archive
(with a typed reason), restore, approve/reject, undo of a replacement, and history with "Revert to this" in
place (htmx; each action also works without JavaScript, the history then being a page of its own).

Reads (the list, its counts) come first; the views after them. The counts and the list classify items with
the same rule (``ltm.store.states``: ``state_q`` / ``state_of``), so they always agree; the words for a state
are ``shared.item_words``.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memoryboard.ltm.store.items import MemoryError, memory_archive, memory_restore
from memoryboard.ltm.store.selectors import own_memories, user_namespaces_q
from memoryboard.ltm.store.states import state_of, state_q
from memoryboard.ltm.store.versions import memory_history
from memoryboard.ltm.write.edits import memory_revert, memory_update
from memoryboard.ltm.write.review import memory_replacement_undo
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryState, MemoryStateChange, MemoryType
from memoryboard.roles import can_change_any_memory, can_read_all_memories
from memoryboard.shared.item_words import describe, namespace_agent, state_title
from memoryboard.web.forms import SupportArchiveForm, SupportItemEditForm

PAGE_SIZE = 50


# --- reads ---------------------------------------------------------------------------------------------


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
    paused = set(qs.filter(state_q(MemoryState.PAUSED)).values_list("pk", flat=True))
    # Past their expiry, not archived by the sweep yet: expired already.
    expired = set(qs.filter(state_q(MemoryState.EXPIRED), archived=False).values_list("pk", flat=True))
    counts: dict[tuple[str, str], int] = {}
    for ids, state in ((paused, MemoryState.PAUSED), (expired, MemoryState.EXPIRED)):
        if not ids:
            continue
        for row in qs.filter(pk__in=ids).values("namespace").annotate(n=Count("pk")).order_by():
            key = (namespace_agent(row["namespace"]), state)
            counts[key] = counts.get(key, 0) + row["n"]
    for row in (qs.exclude(pk__in=paused | expired).values("namespace", "archived", "archived_reason")
                .annotate(n=Count("pk")).order_by()):
        state = state_of(archived=row["archived"], archived_reason=row["archived_reason"])
        key = (namespace_agent(row["namespace"]), state)
        counts[key] = counts.get(key, 0) + row["n"]
    return counts


def item_history(memory: LongTermMemory) -> list[dict]:
    """The item's changes, newest first, in words: state changes (by their state names and reasons, in
    words) and the versions of its text (old text → new text, each one revertible but the latest)."""
    rows = [
        {"when": c.created_at, "by": c.actor.get_username() if c.actor_id else _("system"),
         "what": _("%(old)s → %(new)s") % {"old": state_title(c.old_state), "new": state_title(c.new_state)},
         "why": c.reason_label, "before": "", "after": "", "version": None}
        for c in MemoryStateChange.objects.filter(memory_id=memory.pk).select_related("actor")
        .order_by("-created_at", "-id")[:50]
    ]
    versions = memory_history(memory=memory)
    latest = versions[-1].version if versions else 1
    for v in versions:
        changed = v.before_content is not None and v.before_content != v.after_content
        rows.append({"when": v.when, "by": v.who, "what": v.event_label, "why": v.reason_words,
                     "before": v.before_content if changed else "", "after": v.after_content,
                     "version": v.version, "latest": v.version == latest})
    return sorted(rows, key=lambda r: (r["when"], r["version"] or 0), reverse=True)


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
    if memory.archived and memory.archived_reason == ArchivedReason.SUPERSEDED:
        memory_replacement_undo(memory=memory, actor=request.user)
        return _done(request, user_id, memory, _("Replacement undone: agents use this statement again."))
    memory_restore(memory=memory, actor=request.user)
    return _done(request, user_id, memory, _("Restored: agents use it again."))


def _history(request, user_id: str, memory: LongTermMemory, *, status: int = 200, **extra):
    """The history as a fragment (htmx, inside the row) or, without JavaScript, as a whole page."""
    context = {"m": memory, "person_id": user_id, "history": item_history(memory),
               "can_change": can_change_any_memory(request.user), **extra}
    if _is_htmx(request):
        return render(request, "web/person/_item_history.html", context, status=status)
    return render(request, "web/person/item_history.html", context, status=status)


@login_required
@require_GET
def person_item_history(request, user_id: str, memory_id: str):
    """The item's history in words (the row's "History" expands it; without JavaScript, its own page)."""
    memory = _item(request, user_id, memory_id, change=False)
    return _history(request, user_id, memory)


@login_required
@require_POST
def person_item_revert(request, user_id: str, memory_id: str):
    """Give the item the text of an earlier version (``ltm.write.edits.memory_revert``: a new version,
    audited as the admin's revert is), then show the history again, where it was asked."""
    memory = _item(request, user_id, memory_id, change=True)
    version = request.POST.get("version", "")
    try:
        memory = memory_revert(memory=memory, actor=request.user, version=version)
    except MemoryError:
        return _history(request, user_id, memory, status=400,
                        error=_("version: there is no such version of this item."))
    done = _("Reverted to version %(n)s: agents use that text now.") % {"n": version}
    if _is_htmx(request):
        return _history(request, user_id, memory, done=done)
    flash.success(request, done)
    return redirect("person-item-history", user_id=user_id, memory_id=memory.pk)
