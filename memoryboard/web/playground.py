"""The strategy playground: every context strategy side by side, memory strategies as dry-run plans.

Numbers come from the strategies' own result objects (:class:`ContextResult`, :class:`MemoryPlan`) via
:mod:`memoryboard.conversations`, exactly as the API renders them; nothing is recomputed here.

The whole configuration is in the URL (a GET form; htmx pushes the URL on every change): the source
(``conversation=`` a stored conversation, or ``trace=`` pasted messages kept as a :class:`PlaygroundTrace`),
the mode (``mode=budget`` sets every strategy to meet ``budget=`` tokens and ranks them), each strategy's
parameters (``c-trim-keep_last=``, ``m-filter-keep_roles=``) and the context window's ``agent=``. A reload
keeps the view; a link shares it. Messages are numbered for people from #1 (the first message) in every
column, plan and the context window; ``data-index`` and the data attributes keep the input position from 0,
as the API's ``kept``/``dropped`` lists do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages as flash
from django.db import InterfaceError, OperationalError
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_GET, require_POST, require_http_methods

from memoryboard import conversations, users
from memoryboard.jsonguard import JSONGuardError, parse_json
from memoryboard.models.labels import json_words
from memoryboard.models import ChatMessage, LongTermMemory, PlaygroundTrace
from memoryboard.playground_traces import trace_touch
from memoryboard.roles import can_apply_memory_strategy, is_developer, is_support
from memoryboard.strategies.reasons import mid_exchange_start, reasons
from memoryboard.strategy_texts import fallback_text, reason_label
from memoryboard.strategies import (
    CONTEXT_STRATEGIES,
    MEMORY_STRATEGIES,
    Message,
    StrategyError,
    context_strategy_info,
    memory_strategy_info,
    normalize_name,
    to_messages,
    total_tokens,
)
from memoryboard.strategies.budget import BudgetFit, fit_to_budget, rank_fits
from memoryboard.strategies.formats import detect_format
from memoryboard.strategies.context import behind_system_prompt, system_prompt_length
from memoryboard.web.forms import MessagesInputError, MessagesInputForm, StrategyParamsForm, parse_messages_json

PREVIEW_CHARS = 280  # longer content is cut, the full text sits behind a <details> toggle
COLLAPSE_RUN = 4  # runs of dropped/summarized messages longer than this collapse into one line
MAX_SHOWN_IN_RUN = 10  # at most this many messages listed inside a collapsed run
KEPT_EDGE = 15  # a kept run longer than 2*KEPT_EDGE shows its edges and collapses the middle
PLAN_ROWS_SHOWN = 50
MAX_BUDGET = 10_000_000


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
    index: int | None  # the input position (0 first; shown as #1); None for a produced summary
    role: str
    content: str
    status: str  # input, kept, dropped, summarized, summary, cleared
    row_id: int | None = None  # the stored row's id (memory plans)
    calls: tuple = ()  # the tool calls of an assistant message (ToolCall: id, name, arguments)
    answers: str = ""  # for a tool result: "name (call id)" of the call it answers
    reason: str = ""  # why it was dropped, summarized or cleared (translated text)
    answered: str = ""  # for a tool result: the name of the tool it answers (``answers`` without ids)

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


def _collapsed(run: list[Row], limit: int | None = MAX_SHOWN_IN_RUN) -> Segment:
    shown = run[:limit] if limit is not None else run
    return Segment(run[0].status, shown, collapsed=True, count=len(run), hidden=len(run) - len(shown),
                   first=run[0].index, last=run[-1].index)


def segments(rows: list[Row], *, everything: bool = False) -> list[Segment]:
    """Group rows for display: long runs of dropped/summarized rows (and the middle of very long kept
    runs) collapse into one ``<details>`` line with a count, so big conversations stay light.
    ``everything``: a collapsed run of dropped/summarized rows lists all of them (the column's "show all")."""
    out: list[Segment] = []
    for run in _runs(rows):
        status = run[0].status
        if status in ("dropped", "summarized") and len(run) > COLLAPSE_RUN:
            out.append(_collapsed(run, None if everything else MAX_SHOWN_IN_RUN))
        elif len(run) > 2 * KEPT_EDGE:
            out.append(Segment(status, run[:KEPT_EDGE]))
            out.append(_collapsed(run[KEPT_EDGE:-KEPT_EDGE]))
            out.append(Segment(status, run[-KEPT_EDGE:]))
        else:
            out.append(Segment(status, run))
    return out


_ROLE_CODES: dict[Any, str] = {}  # Enum.value is slow (a descriptor call): a 10k-message page reads it 60k times


def _role_code(role: Any) -> str:
    code = _ROLE_CODES.get(role)
    if code is None:
        code = _ROLE_CODES.setdefault(role, str(getattr(role, "value", role)).upper())
    return code


def _role(message: Any) -> str:
    return _role_code(message["role"] if isinstance(message, dict) else message.role)


def _content(message: Any) -> str:
    return message["content"] if isinstance(message, dict) else message.content


def _tool_names(messages: Sequence[Message]) -> dict[str, str]:
    return {c.id: c.name for m in messages if getattr(m, "tool_calls", ()) for c in m.tool_calls}


def _row(index: int | None, message: Any, status: str, names: dict[str, str]) -> Row:
    """A message as a row: its tool calls listed (collapsed in the page), a result naming its call."""
    calls = getattr(message, "tool_calls", ())
    answered = getattr(message, "result_ids", ())
    answers = ", ".join(f"{names.get(rid, '?')} ({rid})" for rid in answered)
    return Row(index, _role(message), _content(message), status, calls=calls, answers=answers,
               answered=", ".join(names.get(rid, "?") for rid in answered))


def row_for_reader(row: Row, show_ids: bool) -> Row:
    """A row as shown to its reader: developers read it as stored; support staff read a tool's JSON answer
    and a call's arguments in words ("key: value"), and no call ids."""
    if show_ids or not (row.calls or row.role == "TOOL"):
        return row
    content = (json_words(row.content) or row.content) if row.role == "TOOL" else row.content
    calls = tuple(c._replace(id="", arguments=json_words(c.arguments) or c.arguments) for c in row.calls)
    return replace(row, content=content, calls=calls, answers=row.answered)


def input_rows(messages: Sequence[Message]) -> list[Row]:
    """The shared "Before" column: the input, numbered by position."""
    names = _tool_names(messages)
    return [_row(i, m, "input", names) for i, m in enumerate(messages)]


def result_rows(messages: Sequence[Message], result) -> list[Row]:
    """A strategy's result in input order: each input message with what happened to it (kept, dropped,
    summarized, cleared) and why, and each produced summary where it sits in the output. Read from the
    result object's ``sources`` / ``summarized`` / ``cleared``, nothing recomputed."""
    summarized, cleared = set(result.summarized), set(result.cleared)
    why = {i: reason_label(code) for i, code in reasons(result, messages).items()}
    names = _tool_names(messages)
    rows: list[Row] = []
    nxt = 0  # next input position not yet shown

    def skipped(upto: int) -> None:
        for i in range(nxt, upto):
            row = _row(i, messages[i], "summarized" if i in summarized else "dropped", names)
            row.reason = why.get(i, "")
            rows.append(row)

    for out, src in zip(result.messages, result.sources):
        if src is None:
            rows.append(_row(None, out, "summary", names))
            continue
        skipped(src)
        row = _row(src, out, "cleared" if src in cleared else "kept", names)
        row.reason = why.get(src, "") if src in cleared else ""
        rows.append(row)
        nxt = max(nxt, src + 1)
    skipped(len(messages))
    return rows


def mid_exchange_note(messages: Sequence[Message], result) -> str | None:
    """A warning when the kept part starts with an assistant reply whose question was dropped."""
    index = mid_exchange_start(result, messages)
    if index is None:
        return None
    return _("The kept part starts at #%(n)s, an assistant reply whose question was dropped: the model sees "
             "an answer without its question.") % {"n": index + 1}


def discarded_work(result) -> list[str]:
    """Honest notes on a COMPOSITE whose step's work a later step threw away (e.g. SUMMARIZE paid for a
    summary that SLIDING_WINDOW then dropped), read from the steps' own results."""
    notes = []
    steps = list(result.steps)
    for j, step in enumerate(steps):
        for position, src in enumerate(step.sources):
            if src is not None:
                continue
            for later in steps[j + 1:]:
                if position in later.dropped:
                    notes.append(
                        _("%(step)s made a summary (%(calls)s summary call) that %(later)s then dropped: "
                          "that work is discarded. Raise the budget or lower %(step)s's keep last.")
                        % {"step": step.strategy, "calls": step.llm_calls, "later": later.strategy}
                    )
                    break
                position = later.sources.index(position) if position in later.sources else None
                if position is None:
                    break
    return notes


def _param_text(params: dict, prefix: str = "") -> str:
    """``keep_first=2 · keep_last=37``; for COMPOSITE only its steps' parameters."""
    steps = {str(step).lower() for step in params.get("steps") or ()} if not prefix else set()
    parts = []
    for key, value in params.items():
        if steps and isinstance(value, dict) and key not in steps:
            continue
        if isinstance(value, dict):
            parts.append(_param_text(value, f"{prefix}{key}."))
        elif value in ([], (), "", None):
            continue
        else:
            parts.append(f"{prefix}{key}={', '.join(map(str, value)) if isinstance(value, list) else value}")
    return " · ".join(p for p in parts if p)


def keep_system_prompt(request) -> bool:
    """The visible "keep the system prompt" choice (``?keep_system=``), on by default as in the agent runtime.

    The page sends a hidden ``0`` before the checkbox's ``1``, so the last value is the choice."""
    values = request.GET.getlist("keep_system")
    return not values or values[-1] == "1"


def column_context(name: str, messages: Sequence[Message], form: StrategyParamsForm, *,
                   fit: BudgetFit | None = None, keep_system: bool = True,
                   cache_conversation: str | None = None, everything: bool = False) -> dict[str, Any]:
    """Everything a strategy column shows: the form, the result object, its rows or the error.

    With ``fit`` (same-budget mode) the column shows the fitted strategy's result and parameters.
    ``keep_system``: the leading system messages are kept aside, as the agent runtime does.
    ``cache_conversation``: a stored conversation's id: SUMMARIZE reuses its cached summaries (and says so)."""
    ctx: dict[str, Any] = {"name": name, "info": context_strategy_info(name), "form": form, "fit": fit}
    if fit is None and form.is_bound and not form.is_valid():
        ctx["error"] = form.first_error()
        return ctx
    if fit is not None:
        result = fit.result
        ctx["fit_params"] = _param_text(fit.params)
        ctx["fit_params_json"] = json.dumps(fit.params, ensure_ascii=False)
    else:
        try:
            result = conversations.context_apply(name, messages, form.params(), keep_system=keep_system,
                                                 cache_conversation=cache_conversation)
        except StrategyError as exc:
            ctx["error"] = str(exc)
            return ctx
    data = result.to_dict()
    ctx.update(
        result=data,
        fallback=fallback_text(result.fallback_reason),
        saved_percent=round(data["saved_ratio"] * 100, 1),
        rows=segments(result_rows(messages, result), everything=everything),
        everything=everything,
        notes=[note for note in (*discarded_work(result), mid_exchange_note(messages, result)) if note],
        unchanged=not result.dropped and not result.summarized and not result.cleared,
        kept_count=len(result.kept),
        dropped_count=len(result.dropped),
        summarized_count=len(result.summarized),
        cleared_count=len(result.cleared),
        kept_csv=compact_ids(result.kept),
        dropped_csv=compact_ids(result.dropped),
        summarized_csv=compact_ids(result.summarized),
    )
    return ctx


# --- input and configuration ---------------------------------------------------------------------------


@dataclass
class Source:
    """What the strategies run on: a stored conversation's rows or a pasted trace's messages."""

    messages: tuple[Message, ...]
    conversation_id: str = ""
    trace_id: str = ""
    # The first message is an Anthropic request's top-level ``system``, not one of its messages.
    system_prompt: bool = False

    @property
    def message_count(self) -> int:
        """What the pages call the input's messages (``conversations``: one count): a stored conversation's
        rows; a trace's messages as pasted, its top-level system prompt named beside the count."""
        return len(self.messages) - self.system_prompt


def top_level_system(items: Sequence[Any]) -> bool:
    """Whether a trace's first message is the top-level ``system`` of a pasted Anthropic request
    (``parse_messages_json`` puts it first): Anthropic's messages have no system role of their own. A
    trace of plain text reads the same in both formats and is counted as OpenAI messages."""
    return bool(items) and isinstance(items[0], dict) and items[0].get("role") == "system" and len(items) > 1 \
        and detect_format(items[1:]) == "anthropic"


def _conversation_rows(request, conversation_id: str) -> list:
    try:
        return conversations.conversation_messages(
            conversation_id, queryset=conversations.message_queryset_for(request.user)
        )
    except conversations.ConversationNotFound:
        raise Http404(_("No such conversation.")) from None


def _source(request) -> Source | None:
    """The source named in the query string (404 if unknown or not visible), or ``None`` if none."""
    conversation_id = request.GET.get("conversation", "").strip()
    if conversation_id:
        return Source(to_messages(_conversation_rows(request, conversation_id)), conversation_id=conversation_id)
    trace_id = request.GET.get("trace", "").strip()
    if trace_id:
        trace = PlaygroundTrace.objects.filter(pk=trace_id[:64]).first()
        if trace is None:
            raise Http404(_("No such trace: paste the messages again."))
        trace_touch(trace)
        return Source(to_messages(trace.messages), trace_id=trace.pk,
                      system_prompt=top_level_system(trace.messages))
    return None


def trace_store(*, messages: list, actor) -> PlaygroundTrace:
    """Keep pasted messages under their digest (the same messages give the same link)."""
    trace, created = PlaygroundTrace.objects.get_or_create(
        pk=PlaygroundTrace.digest(messages), defaults={"messages": messages, "created_by": actor}
    )
    if not created:
        trace_touch(trace)
    return trace


def _bound(request, kind: str, name: str) -> StrategyParamsForm:
    """The strategy's form, bound to the query string when it carries any of its fields (else defaults)."""
    prefix = f"{kind[0]}-{name.lower()}-"
    data = request.GET if any(key.startswith(prefix) for key in request.GET) else None
    return StrategyParamsForm(data, kind=kind, strategy=name)


def _budget(request, tokens_before: float) -> tuple[int, str | None]:
    """The budget from ``?budget=`` (default: half the input, in hundreds) and an error naming the field."""
    default = max(100, int(round(tokens_before / 2, -2)))
    raw = request.GET.get("budget", "").strip()
    if not raw:
        return default, None
    try:
        value = int(raw)
    except ValueError:
        return default, _("budget: enter a whole number of tokens.")
    if not 1 <= value <= MAX_BUDGET:
        return default, _("budget: between 1 and %(max)s tokens.") % {"max": MAX_BUDGET}
    return value, None


def _push_url(request) -> str:
    """The page's URL for the current configuration (what a reload or a shared link shows)."""
    query = request.GET.copy()
    query.pop("page", None)
    query.pop("all", None)
    return reverse("playground") + ("?" + query.urlencode() if query else "")


def _budget_columns(request, messages, budget: int) -> tuple[list[dict], list[dict]]:
    """Same-budget mode: every strategy fitted to the budget, its column, and the ranked summary rows.

    With the system prompt kept aside, the strategies are fitted on the messages after it, to the budget
    less the prompt's tokens; each result is then given back over the whole input (the prompt kept)."""
    head = system_prompt_length(tuple(messages)) if keep_system_prompt(request) else 0
    prompt, body = tuple(messages[:head]), tuple(messages[head:])
    reserved = total_tokens(prompt)

    def run(name, params):
        return conversations.context_apply(name, body, params)

    fits, columns = [], []
    for name in CONTEXT_STRATEGIES:
        form = _bound(request, "context", name)
        base = form.params() if not form.is_bound or form.is_valid() else None
        try:
            fit = fit_to_budget(name, len(body), max(1, int(budget - reserved)), run=run, params=base)
        except StrategyError as exc:
            columns.append({"name": name, "info": context_strategy_info(name), "form": form, "error": str(exc)})
            continue
        fit = replace(fit, budget=budget, result=behind_system_prompt(fit.result, prompt))
        fits.append(fit)
        columns.append(column_context(name, messages, form, fit=fit))
    summary = []
    for rank, fit in enumerate(rank_fits(fits), start=1):
        r = fit.result
        summary.append({
            "rank": rank, "name": fit.strategy, "meets": fit.meets, "tokens": r.tokens_after,
            "kept": len(r.kept), "summarized": len(r.summarized), "llm_calls": r.llm_calls,
            "fallback": fallback_text(r.fallback_reason), "params": _param_text(fit.params), "discarded": bool(discarded_work(r)),
        })
    return columns, summary


def _page(request, *, source: Source | None, input_form: MessagesInputForm | None = None, status: int = 200):
    listed = conversations.conversation_list(queryset=conversations.message_queryset_for(request.user))
    names = users.people(c.user_id for c in listed)
    show_ids = is_developer(request.user)
    ctx: dict[str, Any] = {
        "conversations": _conversation_choices(listed, names, show_ids=show_ids),
        "show_ids": show_ids,
        "input_form": input_form or MessagesInputForm(),
        "source": source,
        "columns": [],
        "plans": [],
        "window": None,
    }
    if source is not None:
        if source.conversation_id:
            ctx["source_label"] = next((label for c, label in ctx["conversations"]
                                        if c.conversation_id == source.conversation_id), None) \
                or _conversation_label(request, source.conversation_id, show_ids=show_ids)  # beyond the list
        messages = source.messages
        tokens_before = total_tokens(messages)
        mode = "budget" if request.GET.get("mode") == "budget" else "own"
        budget, budget_error = _budget(request, tokens_before)
        if mode == "budget":
            columns, summary = _budget_columns(request, messages, budget)
        else:
            columns, summary = [column_context(name, messages, _bound(request, "context", name),
                                               keep_system=keep_system_prompt(request),
                                               cache_conversation=source.conversation_id or None)
                                for name in CONTEXT_STRATEGIES], []
        ctx.update(
            keep_system=keep_system_prompt(request),
            mode=mode, budget=budget, budget_error=budget_error, summary=summary, columns=columns,
            tokens_before=tokens_before, message_count=source.message_count, system_prompt=source.system_prompt,
            before=segments(input_rows(messages)),
            push_url=_push_url(request),
        )
        if source.conversation_id:
            ctx["plans"] = [plan_context(request, name, source.conversation_id, _bound(request, "memory", name),
                                         messages=messages)
                            for name in MEMORY_STRATEGIES]
            ctx["window"] = _context_window(request, source.conversation_id, messages)
    return render(request, "web/playground.html", ctx, status=status)


def _conversation_choices(listed, names, *, show_ids: bool) -> list[tuple[Any, str]]:
    """Each stored conversation with what the page calls it: for developers its id and agent id; for
    support staff in words (the agent's name, whose it is, its first question), never an id."""
    if show_ids:
        return [(c, " · ".join([c.conversation_id, c.agent_id, _("user %(name)s") % {
            "name": names[c.user_id].label if c.user_id else ""}])) for c in listed]
    from memoryboard.ltm.people.user_data import conversation_openings
    from memoryboard.web.my_memories import agent_labels

    labels = agent_labels()
    openings = conversation_openings([c.conversation_id for c in listed])
    choices = []
    for c in listed:
        parts = [labels.get(c.agent_id, _("an agent")),
                 _("user %(name)s") % {"name": names[c.user_id].label if c.user_id else _("unknown")}]
        opening = " ".join(openings.get(c.conversation_id, "").split())
        if opening:
            parts.append("“%s”" % (opening if len(opening) <= 48 else opening[:47] + "…"))
        if c.started_at:
            parts.append(date_format(timezone.localtime(c.started_at), "SHORT_DATE_FORMAT"))
        choices.append((c, " · ".join(parts)))
    return choices


def _conversation_label(request, conversation_id: str, *, show_ids: bool) -> str:
    """What the pages call one stored conversation (:func:`_conversation_choices`)."""
    listed = conversations.conversation_list(queryset=conversations.message_queryset_for(request.user)
                                             .filter(conversation_id=conversation_id))
    return "".join(label for _c, label in _conversation_choices(
        listed, users.people(c.user_id for c in listed), show_ids=show_ids))


def _window_rows(side, memories: list, *, show_ids: bool) -> list[Segment]:
    """One side of the context window as rows: the agent's system prompt (built for the call, not a stored
    message; its memory block in words for support staff), then the messages with their tool calls."""
    from memoryboard.web.context_viewer import prompt_in_words

    messages = to_messages(side.messages)
    names = _tool_names(messages)
    rows = []
    for i, (message, position) in enumerate(zip(messages, side.positions)):
        row = _row(position, message, "kept" if position is not None else ("input" if i == 0 else "summary"), names)
        if i == 0 and not show_ids:
            row.content = prompt_in_words(row.content, memories)
        rows.append(row)
    return segments(rows)


def _context_window(request, conversation_id: str, messages: Sequence[Message]) -> dict[str, Any]:
    """The context window viewer of a stored conversation, for the agent in ``?agent=`` (default: its own).

    Developers read what the model receives (the tools' JSON, the memory block, the receipt's item ids);
    support staff read the same request in words: the tools as a list, the memories and receipt by text."""
    from memoryboard.agents_config import get_agents_config
    from memoryboard.web.context_viewer import context_window, tools_in_words

    first = conversations.message_queryset_for(request.user).filter(conversation_id=conversation_id).first()
    config = get_agents_config()
    agent_id = request.GET.get("agent") or first.agent_id
    agent = config.get(agent_id)
    if agent is None:
        agent_id = first.agent_id
        agent = config.get(agent_id) or config.defaults
    window = context_window(agent=agent, user_id=first.user_id, conversation_id=conversation_id, rows=messages)
    show_ids = is_developer(request.user)
    receipt_rows = window.receipt.candidate_rows() if window.receipt is not None else []
    if not show_ids and receipt_rows:
        texts = {item.memory.pk: item.memory.content for item in window.memories}
        missing = {row.get("id") for row in receipt_rows} - set(texts)
        texts.update((pk, (value or {}).get("content", "") if isinstance(value, dict) else "") for pk, value in
                     LongTermMemory.objects.filter(pk__in=missing).values_list("pk", "value_json"))
        receipt_rows = [{**row, "text": texts.get(row.get("id"), "")} for row in receipt_rows]
    return {
        "data": window,
        "agent_id": agent_id,
        "agents": [(a, cfg.label) for a, cfg in sorted(config.agents.items())],
        "show_ids": show_ids,
        # Each side is the agent's system prompt and then the messages: counted as the conversation list
        # counts them, the prompt named beside the count.
        "sides": [(label, side, _window_rows(side, window.memories, show_ids=show_ids), len(side.messages) - 1)
                  for label, side in ((_("Before the pipeline"), window.before),
                                      (_("After the pipeline"), window.after))],
        "tools_json": json.dumps(window.tools, ensure_ascii=False, indent=2) if show_ids else "",
        "tools_words": [] if show_ids else tools_in_words(window.tools),
        "receipt_rows": receipt_rows,
    }


@playground_access
@require_http_methods(["GET", "POST"])
def playground(request):
    """GET: the playground for the configuration in the query string. POST: pasted or uploaded JSON
    messages, kept as a trace; the answer redirects to the trace's URL (a reload keeps it, a link shares it)."""
    if request.method == "POST":
        form = MessagesInputForm(request.POST, request.FILES)
        if not form.is_valid():
            return _page(request, source=None, input_form=form, status=400)
        trace = trace_store(messages=form.cleaned_data["messages"], actor=request.user)
        return redirect(reverse("playground") + "?" + urlencode({"trace": trace.pk}))
    return _page(request, source=_source(request))


def _strategy_or_404(name: str, kind: str) -> str:
    try:
        return normalize_name(name, kind)
    except StrategyError:
        raise Http404(_("Unknown strategy.")) from None


def _with_push_url(request, response: HttpResponse) -> HttpResponse:
    response["HX-Push-Url"] = _push_url(request)
    return response


@playground_access
@require_GET
def context_column(request, name: str):
    """One context strategy's column, re-rendered when its parameters change (htmx target); the answer
    tells htmx the page URL of the whole configuration (``HX-Push-Url``)."""
    name = _strategy_or_404(name, "context")
    source = _source(request)
    if source is None:
        return HttpResponseBadRequest(_("conversation or trace: name the messages to run on."),
                                      content_type="text/plain; charset=utf-8")
    form = StrategyParamsForm(request.GET, kind="context", strategy=name)
    ctx = column_context(name, source.messages, form, keep_system=keep_system_prompt(request),
                         cache_conversation=source.conversation_id or None,
                         everything=request.GET.get("all") == "1")
    response = render(request, "web/_context_column.html", {"col": ctx, "mode": "own",
                                                              "show_ids": is_developer(request.user)},
                      status=400 if "error" in ctx else 200)
    return _with_push_url(request, response)


# --- memory strategies -------------------------------------------------------------------------------


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
        messages = to_messages(_conversation_rows(request, conversation_id))
    try:
        plan = conversations.memory_plan(name, conversation_id=conversation_id, params=params, rows=messages)
    except StrategyError as exc:
        ctx["error"] = str(exc)
        return ctx
    delete_ids = list(plan.delete_ids)
    position = {m.id: i for i, m in enumerate(messages)}
    by_id = {m.id: m for m in messages}
    names = _tool_names(messages)
    shown = [by_id[i] for i in delete_ids[:PLAN_ROWS_SHOWN] if i in by_id]
    roles = Counter(by_id[i].role for i in delete_ids if i in by_id)
    role_labels = dict(ChatMessage.Role.choices)
    data = plan.to_dict()
    ctx.update(
        plan=data,
        fallback=fallback_text(plan.fallback_reason),
        saved_percent=round(data["saved_ratio"] * 100, 1),
        # as in the columns: an assistant row names its tool calls, a tool row the call it answers
        deleted_rows=[replace(_row(position.get(m.id), m, "dropped", names), row_id=m.id) for m in shown],
        deleted_hidden=max(0, len(delete_ids) - PLAN_ROWS_SHOWN),
        deleted_by_role=sorted((str(role_labels.get(_role_code(r), _role_code(r))).lower(), n)
                               for r, n in roles.items()),
        deleted_positions=compact_ids(sorted(position[i] + 1 for i in delete_ids if i in position)),  # from #1
        inserted_rows=[Row(None, _role(m), m.content, "summary") for m in plan.inserts],
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
    name = _strategy_or_404(name, "memory")
    conversation_id = request.GET.get("conversation", "").strip()
    messages = to_messages(_conversation_rows(request, conversation_id))  # 404 unless visible
    form = StrategyParamsForm(request.GET, kind="memory", strategy=name)
    ctx = plan_context(request, name, conversation_id, form, messages=messages)
    response = render(request, "web/_memory_plan.html", {"plan": ctx, "show_ids": is_developer(request.user)},
                      status=400 if "error" in ctx else 200)
    return _with_push_url(request, response)


@playground_access
@require_GET
def memory_confirm_view(request, name: str):
    """The confirmation before applying a plan: exactly which rows will be deleted (by role, position and
    row id, with their text) and inserted; applying posts the confirmed deletions."""
    if not can_apply_memory_strategy(request.user):
        raise PermissionDenied(_("Only staff may apply memory strategies."))
    name = _strategy_or_404(name, "memory")
    conversation_id = request.GET.get("conversation", "").strip()
    messages = to_messages(_conversation_rows(request, conversation_id))
    form = _bound(request, "memory", name)
    ctx = plan_context(request, name, conversation_id, form, messages=messages)
    back = _push_url(request) + f"#plan-{name.lower()}"
    show_ids = is_developer(request.user)
    return render(request, "web/playground_confirm.html", {"plan": ctx, "back": back, "show_ids": show_ids,
                                                             "conversation_label": _conversation_label(
                                                                 request, conversation_id, show_ids=show_ids),
                                                             "message_count": len(messages)},
                  status=400 if "error" in ctx else 200)


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

