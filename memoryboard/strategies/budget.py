"""Set every context strategy to meet one token budget, and rank the results (the playground's "same budget").

Each strategy keeps its own parameters except the ones that decide its size, which are chosen so that its
output fits ``budget`` estimated tokens; the result is always the strategy's own :class:`ContextResult`,
obtained by running it (``run``), never computed here.

- SLIDING_WINDOW: ``max_tokens = budget``.
- TRIM: ``keep_first`` as given (0 if those alone exceed the budget), the largest ``keep_last`` that fits.
- SUMMARIZE: ``threshold = 0`` (summarize whenever over budget), the largest ``keep_last`` whose tail fits
  beside the summary: sized from the tail's tokens, then corrected once with the real summary's size
  (at most two summarizer runs: an LLM is not called in a loop).
- COMPOSITE: its sliding window gets ``max_tokens = budget`` and its summarize step the SUMMARIZE fit.
- CLEAR_TOOL_RESULTS: ``trigger_tokens = budget``; ``keep`` lowered to 0 if needed. It only clears tool
  results, so it may not reach the budget: the fit says so (``meets`` is false).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .result import ContextResult
from .tokens import total_tokens

__all__ = ["BudgetFit", "fit_to_budget", "rank_fits"]

Runner = Callable[[str, Mapping[str, Any]], ContextResult]

SUMMARY_RESERVE = 0.2  # share of the budget first set aside for a summary, before its real size is known


@dataclass(frozen=True)
class BudgetFit:
    """A strategy set to meet a budget: the parameters chosen, its result, and how many runs it took."""

    strategy: str
    params: dict[str, Any]
    result: ContextResult
    budget: int
    runs: int

    @property
    def meets(self) -> bool:
        return self.result.tokens_after <= self.budget


def _largest(fits: Callable[[int], bool], high: int) -> int:
    """The largest ``k`` in ``0..high`` with ``fits(k)`` (``fits`` is monotone: true, then false); 0 if none."""
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


class _Counter:
    def __init__(self, run: Runner, name: str):
        self.run, self.name, self.count = run, name, 0

    def __call__(self, params: Mapping[str, Any]) -> ContextResult:
        self.count += 1
        return self.run(self.name, params)


def _tail_that_fits(run: _Counter, n: int, tokens: float) -> int:
    """How many newest messages fit in ``tokens``: the sliding window's own answer."""
    if tokens < 1:
        return 0
    window = run.run("SLIDING_WINDOW", {"max_tokens": int(tokens)})
    return min(n, len(window.kept))


def _fit_trim(run: _Counter, n: int, budget: int, params: dict) -> tuple[dict, ContextResult]:
    params = dict(params)
    if run({**params, "keep_last": 0}).tokens_after > budget:
        params["keep_first"] = 0
    params["keep_last"] = _largest(lambda k: run({**params, "keep_last": k}).tokens_after <= budget, n)
    return params, run(params)


def _fit_summarize(run: _Counter, n: int, budget: int, params: dict) -> tuple[dict, ContextResult]:
    if _tail_that_fits(run, n, budget) >= n:  # everything fits: nothing to summarize
        params = {**params, "threshold": n}
        return params, run(params)
    params = {**params, "threshold": 0}
    keep = _tail_that_fits(run, n, budget * (1 - SUMMARY_RESERVE))
    result = run({**params, "keep_last": keep})
    if result.tokens_after > budget and keep:
        summary = result.tokens_after - _tail_tokens(result)
        keep = min(keep, _tail_that_fits(run, n, budget - summary))
        result = run({**params, "keep_last": keep})
    params["keep_last"] = keep
    return params, result


def _tail_tokens(result: ContextResult) -> float:
    """Tokens of the output messages that came from the input verbatim (all but the summary)."""
    return total_tokens([m for m, src in zip(result.messages, result.sources) if src is not None])


def fit_to_budget(name: str, n: int, budget: int, *, run: Runner, params: Mapping[str, Any] | None = None) -> BudgetFit:
    """Run strategy ``name`` with the parameters that make it meet ``budget`` tokens.

    Args:
        name: Canonical context strategy name.
        n: How many input messages there are.
        budget: The token budget (estimated tokens, :func:`estimated_tokens`).
        run: ``run(name, params)`` applies a strategy to the input and returns its result.
        params: The strategy's other parameters (its defaults if ``None``).

    Returns:
        The chosen parameters and the strategy's result for them.
    """
    counter = _Counter(run, name)
    params = dict(params or {})
    if name == "SLIDING_WINDOW":
        params = {**params, "max_tokens": max(1, budget)}
        result = counter(params)
    elif name == "TRIM":
        params, result = _fit_trim(counter, n, budget, params)
    elif name == "SUMMARIZE":
        params, result = _fit_summarize(counter, n, budget, params)
    elif name == "COMPOSITE":
        steps = [str(s).upper() for s in params.get("steps") or ("SUMMARIZE", "SLIDING_WINDOW")]
        if "SUMMARIZE" in steps:
            summarize = _Counter(run, "SUMMARIZE")
            params["summarize"], _ = _fit_summarize(summarize, n, budget, dict(params.get("summarize") or {}))
            counter.count += summarize.count
        if "SLIDING_WINDOW" in steps:
            params["sliding_window"] = {**(params.get("sliding_window") or {}), "max_tokens": max(1, budget)}
        if "CLEAR_TOOL_RESULTS" in steps:
            params["clear_tool_results"] = {**(params.get("clear_tool_results") or {}), "trigger_tokens": budget}
        result = counter(params)
    elif name == "CLEAR_TOOL_RESULTS":
        params = {**params, "trigger_tokens": budget}
        result = counter(params)
        if result.tokens_after > budget and params.get("keep", 1) != 0:
            params["keep"] = 0
            result = counter(params)
    else:
        result = counter(params)
    return BudgetFit(strategy=name, params=params, result=result, budget=budget, runs=counter.count)


def rank_fits(fits: list[BudgetFit]) -> list[BudgetFit]:
    """Best first: within the budget, then most tokens kept (the budget used), most input messages kept
    verbatim, fewest summary calls, no fallback."""
    return sorted(
        fits,
        key=lambda f: (
            not f.meets,
            -f.result.tokens_after if f.meets else f.result.tokens_after,
            -len(f.result.kept),
            f.result.llm_calls,
            f.result.fallback is not None,
        ),
    )
