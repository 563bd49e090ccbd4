"""The memory strategies on the playground: dry-run plans, the confirmation, and applying a plan."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages as flash
from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_GET, require_POST

from memoryboard import conversations
from memoryboard.jsonguard import JSONGuardError, parse_json
from memoryboard.models import ChatMessage
from memoryboard.roles import can_apply_memory_strategy, is_developer
from memoryboard.strategies import Message, StrategyError, memory_strategy_info, to_messages
from memoryboard.strategy_texts import fallback_text
from memoryboard.web.forms import StrategyParamsForm
from memoryboard.web.playground.rows import Row, compact_ids, message_row, parse_ids, role_code, role_of, tool_names
from memoryboard.web.playground.source import (
    bound_form,
    conversation_label,
    conversation_rows,
    playground_access,
    push_url,
    strategy_or_404,
    with_push_url,
)

PLAN_ROWS_SHOWN = 50


def plan_context(
    request, name: str, conversation_id: str, form: StrategyParamsForm, *, messages: Sequence[Message] | None = None
) -> dict[str, Any]:
    """A memory strategy's dry-run plan for a stored conversation, with the rows it would delete/insert,
    numbered by input position and row id.

    ``messages`` are the conversation's stored messages (with ids) when already read.
    """
    ctx: dict[str, Any] = {
        "name": name, "info": memory_strategy_info(name), "form": form, "conversation_id": conversation_id,
        "can_apply": can_apply_memory_strategy(request.user),
    }
    if form.is_bound and not form.is_valid():
        ctx["error"] = form.first_error()
        return ctx
    params = form.params()
    if messages is None:
        messages = to_messages(conversation_rows(request, conversation_id))
    try:
        plan = conversations.memory_plan(name, conversation_id=conversation_id, params=params, rows=messages)
    except StrategyError as exc:
        ctx["error"] = str(exc)
        return ctx
    delete_ids = list(plan.delete_ids)
    position = {m.id: i for i, m in enumerate(messages)}
    by_id = {m.id: m for m in messages}
    names = tool_names(messages)
    shown = [by_id[i] for i in delete_ids[:PLAN_ROWS_SHOWN] if i in by_id]
    roles = Counter(by_id[i].role for i in delete_ids if i in by_id)
    role_labels = dict(ChatMessage.Role.choices)
    data = plan.to_dict()
    ctx.update(
        plan=data,
        fallback=fallback_text(plan.fallback_reason),
        saved_percent=round(data["saved_ratio"] * 100, 1),
        # as in the columns: an assistant row names its tool calls, a tool row the call it answers
        deleted_rows=[replace(message_row(position.get(m.id), m, "dropped", names), row_id=m.id) for m in shown],
        deleted_hidden=max(0, len(delete_ids) - PLAN_ROWS_SHOWN),
        deleted_by_role=sorted((str(role_labels.get(role_code(r), role_code(r))).lower(), n)
                               for r, n in roles.items()),
        deleted_positions=compact_ids(sorted(position[i] + 1 for i in delete_ids if i in position)),  # from #1
        inserted_rows=[Row(None, role_of(m), m.content, "summary") for m in plan.inserts],
        params_json=json.dumps(params, ensure_ascii=False),
        delete_ids_csv=compact_ids(delete_ids),
        # the whole configuration goes along, so that "Cancel" comes back to the very same view
        confirm_url=reverse("playground-memory-confirm", args=[name.lower()]) + "?" + urlencode(
            {**dict(request.GET.lists()), "conversation": conversation_id}, doseq=True),
    )
    return ctx


@playground_access
@require_GET
def memory_plan_view(request, name: str):
    """A memory strategy's dry-run plan, re-rendered when its rules change (htmx target)."""
    name = strategy_or_404(name, "memory")
    conversation_id = request.GET.get("conversation", "").strip()
    messages = to_messages(conversation_rows(request, conversation_id))  # 404 unless visible
    form = StrategyParamsForm(request.GET, kind="memory", strategy=name)
    ctx = plan_context(request, name, conversation_id, form, messages=messages)
    response = render(request, "web/_memory_plan.html", {"plan": ctx, "show_ids": is_developer(request.user)},
                      status=400 if "error" in ctx else 200)
    return with_push_url(request, response)


@playground_access
@require_GET
def memory_confirm_view(request, name: str):
    """The confirmation before applying a plan: exactly which rows will be deleted (by role, position and
    row id, with their text) and inserted; applying posts the confirmed deletions."""
    if not can_apply_memory_strategy(request.user):
        raise PermissionDenied(_("Only staff may apply memory strategies."))
    name = strategy_or_404(name, "memory")
    conversation_id = request.GET.get("conversation", "").strip()
    messages = to_messages(conversation_rows(request, conversation_id))
    form = bound_form(request, "memory", name)
    ctx = plan_context(request, name, conversation_id, form, messages=messages)
    back = push_url(request) + f"#plan-{name.lower()}"
    show_ids = is_developer(request.user)
    return render(request, "web/playground_confirm.html", {"plan": ctx, "back": back, "show_ids": show_ids,
                                                             "conversation_label": conversation_label(
                                                                 request, conversation_id, show_ids=show_ids),
                                                             "message_count": len(messages)},
                  status=400 if "error" in ctx else 200)


def _back_to(request, conversation_id: str) -> str:
    """Where applying returns: the playground view the plan was confirmed from (``back``, a playground URL
    of this site only), else the conversation's playground."""
    back = request.POST.get("back", "")
    if back.startswith(reverse("playground") + "?") and url_has_allowed_host_and_scheme(
            back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return back
    return reverse("playground") + "?" + urlencode({"conversation": conversation_id}) + "#memory"


@playground_access
@require_POST
def memory_apply_view(request, name: str):
    """Apply a confirmed plan: re-planned and compared with the confirmed deletions in one transaction."""
    if not can_apply_memory_strategy(request.user):
        raise PermissionDenied(_("Only staff may apply memory strategies."))
    name = strategy_or_404(name, "memory")
    conversation_id = request.POST.get("conversation", "").strip()
    conversation_rows(request, conversation_id)
    expected = parse_ids(request.POST.get("expected_delete_ids", ""))
    try:
        params = parse_json(request.POST.get("params", "{}") or "{}", field_prefix="params")
    except JSONGuardError as exc:  # names a key of the posted JSON: plain text, never HTML
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    if expected is None or not isinstance(params, dict):
        return HttpResponseBadRequest(_("expected_delete_ids and params must be a list of ids and a JSON object."))
    target = _back_to(request, conversation_id)
    try:
        plan = conversations.memory_apply(
            name, conversation_id=conversation_id, params=params, actor=request.user, expected_delete_ids=expected
        )
    except (OperationalError, InterfaceError):
        # Like the API's 503: the apply is one transaction, rolled back; say so instead of a 500.
        return render(request, "web/unavailable.html", {"back": target}, status=503)
    except conversations.StalePlanError:
        flash.error(request, _("The conversation changed since the plan was shown; nothing was changed. "
                               "Review the new plan."))
        return redirect(target)
    except StrategyError as exc:
        flash.error(request, str(exc))
        return redirect(target)
    except conversations.ConversationNotFound:
        raise Http404(_("No such conversation.")) from None
    deleted = len(plan.delete_ids)
    flash.success(request, ngettext("%(name)s applied: %(deleted)s message deleted, %(inserted)s inserted.",
                                    "%(name)s applied: %(deleted)s messages deleted, %(inserted)s inserted.", deleted)
                  % {"name": plan.strategy, "deleted": deleted, "inserted": len(plan.inserts)})
    if not conversations.message_queryset_for(request.user).filter(conversation_id=conversation_id).exists():
        target = reverse("playground")
    return redirect(target)
