"""Replay: per-call tokens sent and cached, worked out by hand on a six-call conversation."""

from __future__ import annotations

import pytest

from memoryboard.strategies import StrategyConfigError
from memoryboard.strategies.replay import Price, call_points, replay
from memoryboard.strategies.formats import read_conversation

from .helpers import replay_conversation

_conversation = replay_conversation  # hand-computed figures below: user texts 8 tokens, replies 12


def _rows(result, key):
    return [row.to_dict()[key] for row in result.calls]


def test_a_call_before_each_reply_and_one_at_the_end_on_a_user_turn():
    msgs = read_conversation(_conversation()).messages
    assert call_points(msgs) == [2, 4, 6, 8, 10, 12]
    msgs = read_conversation(_conversation(final_reply=True)).messages
    assert call_points(msgs) == [2, 4, 6, 8, 10, 12]


def test_a_tool_round_is_a_call_of_its_own():
    messages = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
    ]
    assert call_points(read_conversation(messages).messages) == [1, 3]


def test_trim_keeps_the_cached_prefix_of_system_and_first_message():
    (result,) = replay(_conversation(), [("trim", {"keep_first": 1, "keep_last": 2})])
    # Call 1 sends [S, U1]; call 2 [S, U1, A1, U2]; from call 3 on [S, U1, A(n-1), Un]: 36 tokens,
    # of which [S, U1] (16) repeat the previous call's start.
    assert _rows(result, "sent_tokens") == [16, 36, 36, 36, 36, 36]
    assert _rows(result, "cached_tokens") == [0, 16, 16, 16, 16, 16]
    assert _rows(result, "dropped") == [0, 0, 2, 4, 6, 8]
    assert _rows(result, "output_tokens") == [12, 12, 12, 12, 12, 0]
    assert result.totals.items() >= {"sent_tokens": 196, "cached_tokens": 80, "output_tokens": 60,
                                     "summary_calls": 0, "calls": 6, "most_lost_turns": 5}.items()
    # From call 3 on, every earlier exchange but the first question's lost its question or its reply.
    assert _rows(result, "lost_turns") == [0, 0, 2, 3, 4, 5]


def test_sliding_window_breaks_the_cache_on_every_call_once_it_slides():
    (result,) = replay(_conversation(), [("SLIDING_WINDOW", {"max_tokens": 30})])
    # From call 3 the window is [U(n-1), A(n-1), Un] (28 tokens): only the system prompt repeats.
    assert _rows(result, "sent_tokens") == [16, 36, 36, 36, 36, 36]
    assert _rows(result, "cached_tokens") == [0, 16, 8, 8, 8, 8]
    assert result.totals["cached_tokens"] == 48
    # The window keeps the last exchange whole: one fewer exchange lost than TRIM keeping U1 alone.
    assert _rows(result, "lost_turns") == [0, 0, 1, 2, 3, 4]


def test_a_summary_keeps_the_exchanges_it_folded():
    (result,) = replay(_conversation(turns=12), [("summarize", {"threshold": 6, "keep_last": 2})])
    assert result.totals["most_lost_turns"] == 0 and result.totals["summary_calls"] > 0


def test_cost_prices_uncached_cached_and_output_tokens():
    (trim_result,) = replay(_conversation(), [("trim", {"keep_first": 1, "keep_last": 2})])
    price = Price(input=1.0, cached_input=0.1, output=2.0)
    # (196 - 80) × 1 + 80 × 0.1 + 60 × 2 = 244 dollars per million tokens.
    assert trim_result.cost(price) == pytest.approx(244 / 1_000_000)
    assert trim_result.to_dict(price)["cost"] == pytest.approx(244 / 1_000_000)


def test_clear_tool_results_counts_cleared_messages_per_call():
    messages = [{"role": "user", "content": "find it"}]
    for n in range(3):
        messages += [
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": f"c{n}", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "x" * 500},
        ]
    messages.append({"role": "assistant", "content": "done"})
    (result,) = replay(messages, [("clear_tool_results", {"trigger_tokens": 100, "keep": 1})])
    assert len(result.calls) == 4
    assert _rows(result, "cleared") == [0, 0, 1, 2]
    # Clearing the older result changes the message after the unchanged prefix: the cache stops there.
    sent = _rows(result, "sent_tokens")
    cached = _rows(result, "cached_tokens")
    assert all(c < s for c, s in zip(cached[1:], sent[1:]))


def test_summarize_reuses_its_summary_across_calls():
    messages = _conversation(turns=12)
    (result,) = replay(messages, [("summarize", {"threshold": 6, "keep_last": 2})])
    summarized = _rows(result, "summarized")
    assert summarized[:3] == [0, 0, 0] and all(n > 0 for n in summarized[3:])
    assert result.totals["sent_tokens"] == sum(_rows(result, "sent_tokens"))


def test_several_strategies_and_bad_names_are_named_by_position():
    results = replay(_conversation(), [("trim", {}), ("sliding_window", {"max_tokens": 30})])
    assert [r.name for r in results] == ["TRIM", "SLIDING_WINDOW"]
    with pytest.raises(StrategyConfigError) as error:
        replay(_conversation(), [("trim", {}), ("nope", {})])
    assert error.value.field == "strategies[1].name"
    with pytest.raises(StrategyConfigError) as error:
        replay(_conversation(), [("trim", {"keep_last": -1})])
    assert error.value.field == "strategies[0].params.keep_last"
    with pytest.raises(StrategyConfigError):
        replay(_conversation(), [])


def test_anthropic_top_level_system_is_sent_with_every_call():
    messages = [{"role": "user", "content": "U1".ljust(10, ".")},
                {"role": "assistant", "content": "A1".ljust(20, ".")},
                {"role": "user", "content": "U2".ljust(10, ".")}]
    (result,) = replay(messages, [("trim", {})], format="anthropic", system="S" * 10)
    assert _rows(result, "sent_tokens") == [16, 36]
    assert _rows(result, "cached_tokens") == [0, 16]


# --- why each message went ----------------------------------------------------------------------------

from memoryboard.strategies import apply_context  # noqa: E402
from memoryboard.strategies.reasons import REASONS, mid_exchange_start, reasons  # noqa: E402


def _read(messages):
    return read_conversation(messages).messages


def test_reasons_name_the_rule_of_each_strategy():
    messages = _conversation()
    msgs = _read(messages)
    trim = apply_context("trim", messages, {"keep_first": 1, "keep_last": 2})
    assert set(reasons(trim, msgs).values()) == {"outside_keep"} and set(reasons(trim, msgs)) == set(trim.dropped)
    window = apply_context("sliding_window", messages, {"max_tokens": 30}, keep_system=True)
    assert set(reasons(window, msgs)) == set(window.dropped) and set(reasons(window, msgs).values()) == {"over_budget"}
    summary = apply_context("summarize", messages, {"threshold": 4, "keep_last": 2}, keep_system=True)
    assert {reasons(summary, msgs)[i] for i in summary.summarized} == {"summarized"}
    assert all(code in REASONS for code in reasons(summary, msgs).values())


def test_a_tool_result_goes_with_its_call_and_says_so():
    messages = [
        {"role": "user", "content": "q" * 50},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r" * 400},
        {"role": "assistant", "content": "a" * 50},
        {"role": "user", "content": "q" * 50},
    ]
    result = apply_context("sliding_window", messages, {"max_tokens": 60})
    why = reasons(result, _read(messages))
    assert why[1] == "over_budget" and why[2] == "with_its_unit"


def test_composite_reasons_come_from_the_step_that_removed_the_message():
    messages = _conversation(turns=12)
    result = apply_context("composite", messages, {
        "steps": ["summarize", "sliding_window"], "summarize": {"threshold": 6, "keep_last": 6},
        "sliding_window": {"max_tokens": 45}}, keep_system=True)
    why = reasons(result, _read(messages))
    assert set(why) == set(result.dropped) | set(result.summarized)
    # The window dropped the summary and the oldest kept messages; the folded ones still say "summarized".
    assert {why[i] for i in result.dropped} == {"summarized", "over_budget"}
    roomy = apply_context("composite", messages, {
        "steps": ["summarize", "sliding_window"], "summarize": {"threshold": 6, "keep_last": 6},
        "sliding_window": {"max_tokens": 2000}}, keep_system=True)
    assert roomy.summarized and {reasons(roomy, _read(messages))[i] for i in roomy.summarized} == {"summarized"}


def test_a_window_that_starts_with_an_answer_says_so():
    messages = _conversation(final_reply=True)  # ends on A6: the window [A6] has no question
    msgs = _read(messages)
    result = apply_context("sliding_window", messages, {"max_tokens": 12}, keep_system=True)
    assert mid_exchange_start(result, msgs) == len(msgs) - 1
    clean = apply_context("sliding_window", messages, {"max_tokens": 20}, keep_system=True)
    assert mid_exchange_start(clean, msgs) is None
