"""Actions on one of the user's items from the list: delete, undo a delete, pause, resume, and adding one."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from memoryboard.agents_config import get_agents_config
from memoryboard.ltm.store.items import MemoryError, memory_delete_for_user, memory_restore_for_user, memory_set_paused
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import Source
from memoryboard.models.namespaces import build_namespace
from memoryboard.roles import platform_user_id
from memoryboard.web.forms import MemoryAddForm
from memoryboard.web.my_memories.common import form_error, not_deleted, own_items, recently_deleted, writes_own_memories


@login_required
@writes_own_memories
@require_POST
def memory_delete(request, memory_id: str):
    """Delete one of the user's items, active, paused or archived by staff, decay or the limit (kept for the
    retention period, with undo), then purged."""
    memory = get_object_or_404(not_deleted(request), pk=memory_id)
    memory_delete_for_user(memory=memory, actor=request.user)
    # Undo where the delete happened: the page opens on a bar naming the item, with its Undo button.
    return redirect(reverse("my-memories") + "?" + urlencode({"undo": memory.pk}) + "#undo-bar")


@login_required
@writes_own_memories
@require_POST
def memory_restore(request, memory_id: str):
    """Undo a delete within the retention period."""
    memory = get_object_or_404(recently_deleted(request), pk=memory_id)
    memory_restore_for_user(memory=memory, actor=request.user)
    flash.success(request, _("Memory restored."))
    return redirect("my-memories")


def _set_paused(request, memory_id: str, paused: bool):
    memory = get_object_or_404(own_items(request).filter(archived=False), pk=memory_id)
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
        agent_id = form.cleaned_data["agent"]
        config = get_agents_config().get(agent_id)

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
