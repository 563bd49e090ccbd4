"""The user's memory switch ("use my memories", "save new memories"), pause rules (whole types, whole
agents) and "ask me first" (per agent: what it notes waits for the user's approval)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from memoryboard.audit import audit_record
from memoryboard.models import AuditLog, PauseRule, UserMemorySettings
from memoryboard.roles import platform_user_id
from memoryboard.ltm.write.review import ask_first_set
from memoryboard.web.forms import AskFirstForm, MemorySwitchForm, PauseRulesForm
from memoryboard.web.my_memories.common import form_error, pause_rules_of, writes_own_memories


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


@login_required
@writes_own_memories
@require_POST
def memory_ask_first(request):
    """Set the agents whose new memories wait for the user's approval (the review queue), audited."""
    form = AskFirstForm(request.POST)
    if not form.is_valid():
        flash.error(request, form_error(form))
        return redirect(reverse("my-memories") + "#ask-first")
    ask_first_set(user_id=platform_user_id(request.user), agent_ids=form.cleaned_data["agents"], actor=request.user)
    if form.cleaned_data["agents"]:
        flash.success(request, _("Saved: what these agents note now waits for your approval."))
    else:
        flash.success(request, _("Saved: agents remember without asking you first."))
    return redirect(reverse("my-memories") + "#ask-first")
