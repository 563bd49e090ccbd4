"""The context strategies' columns: each strategy's result side by side, or every strategy fitted to one
token budget and ranked; one column re-rendered when its parameters change (htmx)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from memoryboard import conversations
from memoryboard.roles import is_developer
from memoryboard.strategies import CONTEXT_STRATEGIES, Message, StrategyError, context_strategy_info, total_tokens
from memoryboard.strategies.budget import BudgetFit, fit_to_budget, rank_fits
from memoryboard.strategies.context import behind_system_prompt, system_prompt_length
from memoryboard.strategy_texts import fallback_text
from memoryboard.web.forms import StrategyParamsForm
from memoryboard.web.playground.rows import (
    compact_ids,
    discarded_work,
    mid_exchange_note,
    param_text,
    result_rows,
    segments,
)
from memoryboard.web.playground.source import (
    bound_form,
    keep_system_prompt,
    playground_access,
    source_of,
    strategy_or_404,
    with_push_url,
)

MAX_BUDGET = 10_000_000


def column_strategies(columns: list[dict[str, Any]]) -> list[tuple[str, dict]]:
    """``(name, params)`` of each column that ran: its own parameters, or those fitted to the budget."""
    out = []
    for column in columns:
        if column.get("error") or "result" not in column:
            continue
        params = json.loads(column["fit_params_json"]) if column.get("fit_params_json") else column["form"].params()
        out.append((column["name"], params))
    return out


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
        ctx["fit_params"] = param_text(fit.params)
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


def read_budget(request, tokens_before: float) -> tuple[int, str | None]:
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


def _budget_fits(request, messages, budget: int, *, columns: bool) -> tuple[list[dict], list[dict]]:
    head = system_prompt_length(tuple(messages)) if keep_system_prompt(request) else 0
    prompt, body = tuple(messages[:head]), tuple(messages[head:])
    reserved = total_tokens(prompt)

    def run(name, params):
        return conversations.context_apply(name, body, params)

    fits, cols = [], []
    for name in CONTEXT_STRATEGIES:
        form = bound_form(request, "context", name)
        base = form.params() if not form.is_bound or form.is_valid() else None
        try:
            fit = fit_to_budget(name, len(body), max(1, int(budget - reserved)), run=run, params=base)
        except StrategyError as exc:
            cols.append({"name": name, "info": context_strategy_info(name), "form": form, "error": str(exc)})
            continue
        fit = replace(fit, budget=budget, result=behind_system_prompt(fit.result, prompt))
        fits.append(fit)
        if columns:
            cols.append(column_context(name, messages, form, fit=fit))
    summary = []
    for rank, fit in enumerate(rank_fits(fits), start=1):
        r = fit.result
        summary.append({
            "rank": rank, "name": fit.strategy, "meets": fit.meets, "tokens": r.tokens_after,
            "kept": len(r.kept), "summarized": len(r.summarized), "llm_calls": r.llm_calls,
            "fallback": fallback_text(r.fallback_reason), "params": param_text(fit.params), "discarded": bool(discarded_work(r)),
        })
    return cols, summary


def budget_columns(request, messages, budget: int) -> tuple[list[dict], list[dict]]:
    """Same-budget mode: every strategy fitted to the budget, its column, and the ranked summary rows.

    With the system prompt kept aside, the strategies are fitted on the messages after it, to the budget
    less the prompt's tokens; each result is then given back over the whole input (the prompt kept)."""
    return _budget_fits(request, messages, budget, columns=True)


def budget_ranking(request, messages, budget: int) -> list[dict]:
    """The same-budget ranking alone (:func:`budget_columns` without the columns), for the replay page."""
    return _budget_fits(request, messages, budget, columns=False)[1]


@playground_access
@require_GET
def context_column(request, name: str):
    """One context strategy's column, re-rendered when its parameters change (htmx target); the answer
    tells htmx the page URL of the whole configuration (``HX-Push-Url``)."""
    name = strategy_or_404(name, "context")
    source = source_of(request)
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
    return with_push_url(request, response)
