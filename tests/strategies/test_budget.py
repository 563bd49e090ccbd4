"""Strategies set to one token budget: each result is the strategy's own, for the parameters chosen."""

from __future__ import annotations

import pytest

from memoryboard.strategies import CONTEXT_STRATEGIES, apply_context, to_messages, total_tokens
from memoryboard.strategies.budget import fit_to_budget, rank_fits

MESSAGES = [{"role": "system", "content": "You are helpful."}] + [
    {"role": "user" if i % 2 else "assistant", "content": f"turn {i}: " + "words " * (i * 7 % 40 + 3)}
    for i in range(1, 120)
]


def run(name, params):
    return apply_context(name, MESSAGES, params)


@pytest.mark.parametrize("budget", [700, 3000])
@pytest.mark.parametrize("name", ["TRIM", "SUMMARIZE", "SLIDING_WINDOW", "COMPOSITE"])
def test_fit_meets_the_budget_with_the_strategys_own_result(name, budget):
    fit = fit_to_budget(name, len(MESSAGES), budget, run=run)
    assert fit.meets and fit.result.tokens_after <= budget
    assert fit.result == apply_context(name, MESSAGES, fit.params)  # nothing computed on the side


def test_a_budget_smaller_than_the_summary_is_reported_missed():
    fit = fit_to_budget("SUMMARIZE", len(MESSAGES), 150, run=run)
    assert fit.params["keep_last"] == 0 and not fit.meets and fit.result.tokens_after > 150
    # COMPOSITE's window meets it, by dropping the summary (which the playground then says)
    composite = fit_to_budget("COMPOSITE", len(MESSAGES), 150, run=run)
    assert composite.meets and composite.result.llm_calls == 1 and not composite.result.summarized


def test_trim_keeps_as_many_as_fit():
    fit = fit_to_budget("TRIM", len(MESSAGES), 700, run=run)
    one_more = apply_context("TRIM", MESSAGES, {**fit.params, "keep_last": fit.params["keep_last"] + 1})
    assert one_more.tokens_after > 700


def test_summarize_calls_the_summarizer_at_most_twice():
    calls = []

    def counting(name, params):
        result = run(name, params)
        calls.append(result.llm_calls)
        return result

    fit_to_budget("SUMMARIZE", len(MESSAGES), 700, run=counting)
    assert sum(calls) <= 2


def test_input_within_the_budget_is_left_as_is():
    budget = int(total_tokens(to_messages(MESSAGES))) + 10
    for name in ("TRIM", "SUMMARIZE", "SLIDING_WINDOW", "COMPOSITE"):
        fit = fit_to_budget(name, len(MESSAGES), budget, run=run)
        assert fit.result.kept == tuple(range(len(MESSAGES))) and fit.result.llm_calls == 0, name


def test_ranking_puts_the_budget_first_then_tokens_kept():
    fits = [fit_to_budget(name, len(MESSAGES), 700, run=run) for name in CONTEXT_STRATEGIES]
    ranked = rank_fits(fits)
    meets = [f.meets for f in ranked]
    assert meets == sorted(meets, reverse=True)
    within = [f.result.tokens_after for f in ranked if f.meets]
    assert within == sorted(within, reverse=True)
