"""The review queue's and the timeline's buttons, for an end user (their own items) and for support.

Each POST acts on items of one user only (``own_memories``): an id of anyone else's item is ignored or
a 404, and nothing changes. Every change goes through a service, audited.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_POST

from memoryboard.ltm.store.items import MemoryError, end_user_may_edit
from memoryboard.ltm.store.selectors import own_memories
from memoryboard.ltm.write.duplicates import memory_duplicates_dismiss
from memoryboard.ltm.write.edits import memory_revert
from memoryboard.ltm.write.review import memory_conflict_resolve, memory_review_approve, memory_review_reject
from memoryboard.ltm.write.staff import memory_merge_selected
from memoryboard.models import LongTermMemory
from memoryboard.roles import can_change_any_memory, platform_user_id

MAX_IDS = 1000


def _apply(request, scope: QuerySet[LongTermMemory]) -> None:
    """Run the button pressed (approve/reject one or the selected, resolve a conflict, merge or dismiss
    a duplicate) on items of ``scope``, and say what happened."""
    post = request.POST
    action, ids = post.get("action", ""), post.getlist("ids")[:MAX_IDS]
    if post.get("one"):
        action, _sep, one = post["one"].partition(":")
        ids = [one]
    try:
        if action in ("approve", "reject"):
            items = list(scope.filter(pk__in=ids))
            if not items:
                flash.warning(request, _("Select at least one memory."))
                return
            service = memory_review_approve if action == "approve" else memory_review_reject
            done = service(memories=items, actor=request.user)
            message = (ngettext("Approved %(n)d memory.", "Approved %(n)d memories.", len(done)) if action == "approve"
                       else ngettext("Rejected %(n)d memory.", "Rejected %(n)d memories.", len(done)))
            flash.success(request, message % {"n": len(done)})
        elif action == "resolve":
            new = get_object_or_404(scope, pk=post.get("new", ""))
            old = get_object_or_404(scope, pk=post.get("old", ""))
            memory_conflict_resolve(new=new, old=old, keep=post.get("keep", ""), actor=request.user)
            flash.success(request, _("Conflict resolved."))
        elif action in ("merge", "distinct"):
            a = get_object_or_404(scope, pk=post.get("keep_id", ""))
            b = get_object_or_404(scope, pk=post.get("other_id", ""))
            if action == "merge":
                memory_merge_selected(memories=[a, b], actor=request.user)
                flash.success(request, _("Merged."))
            else:
                memory_duplicates_dismiss(a=a, b=b, actor=request.user)
                flash.success(request, _("Marked as not duplicates."))
        else:
            flash.error(request, _("Unknown action."))
    except MemoryError as exc:
        flash.error(request, exc.message)


@login_required
@require_POST
def my_review(request):
    _apply(request, own_memories(user_id=platform_user_id(request.user)))
    return redirect(reverse("my-memories") + "#memory-review")


@login_required
@require_POST
def person_review(request, user_id: str):
    if not can_change_any_memory(request.user):
        raise PermissionDenied
    _apply(request, own_memories(user_id=user_id))
    anchor = request.POST.get("next", "")  # a row of the item list ("item-<id>"), else the review block
    anchor = anchor if anchor.startswith("item-") and anchor[5:].isalnum() else "memory-review"
    return redirect(reverse("person", args=[user_id]) + "#" + anchor)


def _revert(request, memory: LongTermMemory) -> None:
    try:
        memory_revert(memory=memory, actor=request.user, version=request.POST.get("version"))
    except MemoryError as exc:
        flash.error(request, exc.message)
    else:
        flash.success(request, _("Reverted to version %(n)s.") % {"n": request.POST.get("version")})


@login_required
@require_POST
def my_revert(request, memory_id: str):
    memory = get_object_or_404(own_memories(user_id=platform_user_id(request.user)), pk=memory_id)
    if not end_user_may_edit(memory):
        raise PermissionDenied
    _revert(request, memory)
    return redirect("my-memories-detail", memory_id=memory.pk)


@login_required
@require_POST
def support_revert(request, memory_id: str):
    if not can_change_any_memory(request.user):
        raise PermissionDenied
    memory = get_object_or_404(LongTermMemory, pk=memory_id)
    _revert(request, memory)
    target = request.POST.get("next") or reverse("admin:memoryboard_longtermmemory_change", args=[memory.pk])
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("admin:memoryboard_longtermmemory_change", args=[memory.pk])
    return redirect(target)
