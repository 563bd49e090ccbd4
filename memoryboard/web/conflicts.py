"""A conflict's page, for its user (My memories) and for support (the user page): why the two items
conflict, and every way to settle it (keep either, both, merge, edit into one) with what each keeps and
loses, computed by ``ltm.write.conflicts`` doing it and rolling it back. A POST settles it (``step=settle``)
or shows the outcome of the person's own text (``step=preview``)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from memoryboard.ltm.store.items import MemoryError
from memoryboard.ltm.store.selectors import own_memories
from memoryboard.ltm.write.conflicts import conflict_choices, conflict_settle, conflict_why, merged_text
from memoryboard.models import LongTermMemory
from memoryboard.roles import can_change_any_memory, can_read_all_memories, platform_user_id
from memoryboard.web.my_memories.common import writes_own_memories


def _pair(scope: QuerySet[LongTermMemory], new_id: str, old_id: str) -> tuple[LongTermMemory, LongTermMemory]:
    found = {m.pk: m for m in scope.filter(pk__in=[new_id, old_id], archived=False)}
    new, old = found.get(new_id), found.get(old_id)
    if new is None or old is None or (old.pk not in new.conflict_with and new.pk not in old.conflict_with):
        raise Http404(_("This conflict is settled already, or is not yours to settle."))
    return new, old


def _page(request, *, scope, new_id: str, old_id: str, back: str, can_change: bool, person_id: str = ""):
    new, old = _pair(scope, new_id, old_id)
    text, error, status = request.POST.get("text", ""), "", 200
    if request.method == "POST":
        if not can_change:
            raise PermissionDenied
        choice = request.POST.get("choice", "")
        if request.POST.get("step") == "settle":
            try:
                conflict_settle(new=new, old=old, choice=choice, text=text, actor=request.user)
            except MemoryError as exc:
                error, status = exc.message, 400
            else:
                flash.success(request, _("Conflict settled."))
                return redirect(back)
        elif not text.strip():
            error, status = _("Write the one text to keep."), 400
    previews = conflict_choices(new=new, old=old, actor=request.user, text=text.strip() or None)
    return render(request, "web/conflict_settle.html", {
        "new": new, "old": old, "why": conflict_why(new=new, old=old), "previews": previews,
        "text": text.strip() or merged_text(new=new, old=old), "error": error, "back": back,
        "can_change": can_change, "person_id": person_id,
    }, status=status)


@login_required
@writes_own_memories
def my_conflict(request, new_id: str, old_id: str):
    return _page(request, scope=own_memories(user_id=platform_user_id(request.user)), new_id=new_id, old_id=old_id,
                 back=reverse("my-memories") + "#memory-review", can_change=True)


@login_required
def person_conflict(request, user_id: str, new_id: str, old_id: str):
    if not can_read_all_memories(request.user):
        raise PermissionDenied
    return _page(request, scope=own_memories(user_id=user_id), new_id=new_id, old_id=old_id,
                 back=reverse("person", args=[user_id]) + "#memory-review",
                 can_change=can_change_any_memory(request.user), person_id=user_id)
