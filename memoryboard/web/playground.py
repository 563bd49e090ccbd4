"""The strategy playground: every context strategy side by side, memory strategies as dry-run plans.

Numbers come from the strategies' own result objects (:class:`ContextResult`, :class:`MemoryPlan`) via
:mod:`memoryboard.conversations`, exactly as the API renders them; nothing is recomputed here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages as flash
from django.db import InterfaceError, OperationalError
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_http_methods

from memoryboard import conversations
from memoryboard.jsonguard import JSONGuardError, parse_json
from memoryboard.roles import can_apply_memory_strategy, is_developer, is_support
from memoryboard.strategies import (
    CONTEXT_STRATEGIES,
    MEMORY_STRATEGIES,
    Message,
    StrategyError,
    context_strategy_info,
    memory_strategy_info,
    normalize_name,
    to_messages,
)
from memoryboard.web.forms import MessagesInputError, MessagesInputForm, StrategyParamsForm, parse_messages_json

PREVIEW_CHARS = 280  # longer content is cut, the full text sits behind a <details> toggle
COLLAPSE_RUN = 4  # runs of dropped/summarized messages longer than this collapse into one line
MAX_SHOWN_IN_RUN = 10  # at most this many messages listed inside a collapsed run
KEPT_EDGE = 15  # a kept run longer than 2*KEPT_EDGE shows its edges and collapses the middle
PLAN_ROWS_SHOWN = 50


def playground_access(view):
    """Developers, support staff and superusers; end users get 403."""

    @wraps(view)
    @login_required
    def wrapper(request, *args, **kwargs):
        if not (is_developer(request.user) or is_support(request.user)):
            raise PermissionDenied(_("The playground is for developers and support staff."))
        return view(request, *args, **kwargs)

    return wrapper


# --- rendering helpers -------------------------------------------------------------------------------


@dataclass
class Row:
    index: int | None
    role: str
    content: str
    status: str  # kept, dropped, summarized, summary

    @property
    def long(self) -> bool:
        return len(self.content) > PREVIEW_CHARS

    @property
    def preview(self) -> str:
        return self.content[:PREVIEW_CHARS]


@dataclass
class Segment:
    status: str
    rows: list[Row]
    collapsed: bool = False
    count: int = 0
    hidden: int = 0  # rows of a collapsed run not listed at all
    first: int | None = None
    last: int | None = None
    children: list[Segment] = field(default_factory=list)


def _runs(rows: list[Row]) -> list[list[Row]]:
    runs: list[list[Row]] = []
    for row in rows:
        if runs and runs[-1][0].status == row.status:
            runs[-1].append(row)
        else:
            runs.append([row])
    return runs


def _collapsed(run: list[Row]) -> Segment:
    shown = run[:MAX_SHOWN_IN_RUN]
    return Segment(run[0].status, shown, collapsed=True, count=len(run), hidden=len(run) - len(shown),
                   first=run[0].index, last=run[-1].index)


def segments(rows: list[Row]) -> list[Segment]:
    """Group rows for display: long runs of dropped/summarized rows (and the middle of very long kept
    runs) collapse into one ``<details>`` line with a count, so big conversations stay light."""
    out: list[Segment] = []
    for run in _runs(rows):
        status = run[0].status
        if status in ("dropped", "summarized") and len(run) > COLLAPSE_RUN:
            out.append(_collapsed(run))
        elif len(run) > 2 * KEPT_EDGE:
            out.append(Segment(status, run[:KEPT_EDGE]))
            out.append(_collapsed(run[KEPT_EDGE:-KEPT_EDGE]))
            out.append(Segment(status, run[-KEPT_EDGE:]))
        else:
            out.append(Segment(status, run))
    return out


def _role(message: Any) -> str:
    role = message["role"] if isinstance(message, dict) else message.role
    return str(getattr(role, "value", role)).upper()


def _content(message: Any) -> str:
    return message["content"] if isinstance(message, dict) else message.content


def column_context(name: str, messages: list, form: StrategyParamsForm) -> dict[str, Any]:
    """Everything a strategy column shows: the form, the result object, before/after rows or the error."""
    ctx: dict[str, Any] = {"name": name, "info": context_strategy_info(name), "form": form}
    if form.is_bound and not form.is_valid():
        ctx["error"] = form.first_error()
        return ctx
    try:
        result = conversations.context_apply(name, messages, form.params())
    except StrategyError as exc:
        ctx["error"] = str(exc)
        return ctx
    status = ["kept"] * len(messages)
    for i in result.dropped:
        status[i] = "dropped"
    for i in result.summarized:
        status[i] = "summarized"
    before = [Row(i, _role(m), _content(m), status[i]) for i, m in enumerate(messages)]
    after = [
        Row(src, _role(m), m.content, "summary" if src is None else "kept")
        for m, src in zip(result.messages, result.sources)
    ]
    data = result.to_dict()
    ctx.update(
        result=data,
        saved_percent=round(data["saved_ratio"] * 100, 1),
        before=segments(before),
        after=segments(after),
        unchanged=not result.dropped and not result.summarized,
        kept_csv=compact_ids(data["kept"]),
        dropped_csv=compact_ids(data["dropped"]),
        summarized_csv=compact_ids(data["summarized"]),
    )
    return ctx


# --- input -----------------------------------------------------------------------------------------


def _conversation_rows(request, conversation_id: str) -> list:
    try:
        return conversations.conversation_messages(
            conversation_id, queryset=conversations.message_queryset_for(request.user)
        )
    except conversations.ConversationNotFound:
        raise Http404(_("No such conversation.")) from None


def _source_from_post(request) -> tuple[list, str, str]:
    """The input of a column request: a stored conversation id or the carried messages JSON."""
    conversation_id = request.POST.get("conversation", "").strip()
    if conversation_id:
        return _conversation_rows(request, conversation_id), conversation_id, ""
    text = request.POST.get("messages_json", "")
    return parse_messages_json(text), "", text


def _page(request, *, messages: list | None, conversation_id: str = "", messages_json: str = "",
          input_form: MessagesInputForm | None = None, status: int = 200):
    columns = []
    plans = []
    if messages is not None:
        messages = to_messages(messages)  # converted once, shared by the eight strategies
        columns = [column_context(name, messages, StrategyParamsForm(kind="context", strategy=name))
                   for name in CONTEXT_STRATEGIES]
        if conversation_id:
            plans = [plan_context(request, name, conversation_id, StrategyParamsForm(kind="memory", strategy=name),
                                  messages=messages)
                     for name in MEMORY_STRATEGIES]
    window = None
    if conversation_id and messages is not None:
        window = _context_window(request, conversation_id, messages)
    visible = conversations.message_queryset_for(request.user)
    context = {
        "window": window,
        "conversations": conversations.conversation_list(queryset=visible),
        "conversation_id": conversation_id,
        "messages_json": messages_json,
        "message_count": len(messages) if messages is not None else 0,
        "input_form": input_form or MessagesInputForm(),
        "columns": columns,
        "plans": plans,
    }
    return render(request, "web/playground.html", context, status=status)


def _context_window(request, conversation_id: str, messages: Sequence[Message]) -> dict[str, Any]:
    """The context window viewer of a stored conversation, for the agent in ``?agent=`` (default: its own)."""
    from memoryboard.ltm.config import get_agents_config
    from memoryboard.web.context_viewer import context_window

    first = conversations.message_queryset_for(request.user).filter(conversation_id=conversation_id).first()
    config = get_agents_config()
    agent_id = request.GET.get("agent") or first.agent_id
    agent = config.get(agent_id)
    if agent is None:
        agent_id = first.agent_id
        agent = config.get(agent_id) or config.defaults
    window = context_window(agent=agent, user_id=first.user_id, conversation_id=conversation_id, rows=messages)
    return {
        "data": window,
        "agent_id": agent_id,
        "agents": [(a, cfg.name or a) for a, cfg in sorted(config.agents.items())],
        "sides": [(label, side, segments([Row(i, m["role"].upper(), m["content"], "kept")
                                          for i, m in enumerate(side.messages)]))
                  for label, side in ((_("Before the pipeline"), window.before),
                                      (_("After the pipeline"), window.after))],
        "tools_json": json.dumps(window.tools, ensure_ascii=False, indent=2),
    }


@playground_access
@require_http_methods(["GET", "POST"])
def playground(request):
    """GET: pick a stored conversation (``?conversation=``). POST: pasted or uploaded JSON messages."""
    if request.method == "POST":
        form = MessagesInputForm(request.POST, request.FILES)
        if not form.is_valid():
            return _page(request, messages=None, input_form=form, status=400)
        parsed = form.cleaned_data["messages"]
        return _page(request, messages=parsed, messages_json=json.dumps(parsed, ensure_ascii=False),
                     input_form=form)
    conversation_id = request.GET.get("conversation", "").strip()
    if conversation_id:
        rows = _conversation_rows(request, conversation_id)
        return _page(request, messages=rows, conversation_id=conversation_id)
    return _page(request, messages=None)


def _strategy_or_404(name: str, kind: str) -> str:
    try:
        return normalize_name(name, kind)
    except StrategyError:
        raise Http404(_("Unknown strategy.")) from None


@playground_access
@require_POST
def context_column(request, name: str):
    """One context strategy's column, re-rendered when its parameters change (htmx target)."""
    name = _strategy_or_404(name, "context")
    try:
        messages, conversation_id, messages_json = _source_from_post(request)
    except MessagesInputError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    form = StrategyParamsForm(request.POST, kind="context", strategy=name)
    ctx = column_context(name, messages, form)
    return render(request, "web/_context_column.html", {"col": ctx}, status=400 if "error" in ctx else 200)


# --- memory strategies -------------------------------------------------------------------------------


def plan_context(
    request, name: str, conversation_id: str, form: StrategyParamsForm, *, messages: Sequence[Message] | None = None
) -> dict[str, Any]:
    """A memory strategy's dry-run plan for a stored conversation, with the rows it would delete/insert.

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
    try:
        plan = conversations.memory_plan(name, conversation_id=conversation_id, params=params, rows=messages)
    except StrategyError as exc:
        ctx["error"] = str(exc)
        return ctx
    delete_ids = list(plan.delete_ids)
    if messages is None:
        messages = to_messages(conversations.message_queryset_for(request.user)
                               .filter(pk__in=delete_ids[:PLAN_ROWS_SHOWN]).order_by("id"))
    by_id = {m.id: m for m in messages}
    shown = [by_id[i] for i in delete_ids[:PLAN_ROWS_SHOWN] if i in by_id]
    data = plan.to_dict()
    ctx.update(
        plan=data,
        saved_percent=round(data["saved_ratio"] * 100, 1),
        deleted_rows=[Row(m.id, m.role.value, m.content, "dropped") for m in shown],
        deleted_hidden=max(0, len(delete_ids) - PLAN_ROWS_SHOWN),
        inserted_rows=[Row(m.id, m.role.value, m.content, "summary") for m in plan.inserts],
        params_json=json.dumps(params, ensure_ascii=False),
        delete_ids_csv=compact_ids(delete_ids),
    )
    return ctx


@playground_access
@require_POST
def memory_plan_view(request, name: str):
    """A memory strategy's dry-run plan, re-rendered when its rules change (htmx target)."""
    name = _strategy_or_404(name, "memory")
    conversation_id = request.POST.get("conversation", "").strip()
    _conversation_rows(request, conversation_id)  # 404 unless visible
    form = StrategyParamsForm(request.POST, kind="memory", strategy=name)
    ctx = plan_context(request, name, conversation_id, form)
    return render(request, "web/_memory_plan.html", {"plan": ctx}, status=400 if "error" in ctx else 200)


def compact_ids(ids: Sequence[int]) -> str:
    """Ascending ids as ranges, ``"1-3,7,9-12"``: a 10,000-row plan stays a few bytes in the page."""
    parts: list[str] = []
    start = prev = None
    for i in ids:
        if prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


MAX_PARSED_IDS = 200_000  # a plan's deletions; more is not a conversation the playground shows


def parse_ids(text: str) -> list[int] | None:
    """The inverse of :func:`compact_ids`; ``None`` if the text is not a list of ids and ranges, or if
    it lists more than :data:`MAX_PARSED_IDS` ids in total (``1-9999999,1-9999999,…`` in a few bytes)."""
    out: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            low, _, high = part.partition("-")
            first, last = int(low), int(high or low)
            if last < first or len(out) + (last - first + 1) > MAX_PARSED_IDS:
                return None
            out.extend(range(first, last + 1))
    except ValueError:
        return None
    return out


@playground_access
@require_POST
def memory_apply_view(request, name: str):
    """Apply a confirmed plan: re-planned and compared with the confirmed deletions in one transaction."""
    if not can_apply_memory_strategy(request.user):
        raise PermissionDenied(_("Only staff may apply memory strategies."))
    name = _strategy_or_404(name, "memory")
    conversation_id = request.POST.get("conversation", "").strip()
    _conversation_rows(request, conversation_id)
    expected = parse_ids(request.POST.get("expected_delete_ids", ""))
    try:
        params = parse_json(request.POST.get("params", "{}") or "{}", field_prefix="params")
    except JSONGuardError as exc:  # names a key of the posted JSON: plain text, never HTML
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    if expected is None or not isinstance(params, dict):
        return HttpResponseBadRequest(_("expected_delete_ids and params must be a list of ids and a JSON object."))
    target = reverse("playground") + "?" + urlencode({"conversation": conversation_id}) + "#memory"
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
    flash.success(request, _("%(name)s applied: %(deleted)s messages deleted, %(inserted)s inserted.")
                  % {"name": plan.strategy, "deleted": len(plan.delete_ids), "inserted": len(plan.inserts)})
    if not conversations.message_queryset_for(request.user).filter(conversation_id=conversation_id).exists():
        target = reverse("playground")
    return redirect(target)

