"""The user's memory switch ("use my memories", "save new memories") and pause rules (whole types, whole
agents)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from memoryboard.audit import audit_record
from memoryboard.models import AuditLog, PauseRule, UserMemorySettings
from memoryboard.roles import platform_user_id
from memoryboard.web.forms import MemorySwitchForm, PauseRulesForm
from memoryboard.web.my_memories.common import form_error, pause_rules_of


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
        before = pause_rules_of(user_id)
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
