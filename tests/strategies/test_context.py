from __future__ import annotations

import pytest

from memoryboard.strategies import (
    CONTEXT_SUMMARY_INSTRUCTION,
    MAX_CONVERSATION_CHARS,
    Message,
    Role,
    StrategyConfigError,
    SummarizerError,
    apply_context,
    composite,
    conversation_text,
    sliding_window,
    summarize,
    trim,
)

from .helpers import FailingSummarizer, RecordingSummarizer, msg_with_tokens, numbered


def contents(result):
    return [m.content for m in result.messages]


# --- TRIM ---------------------------------------------------------------------------------------------


def test_trim_design_example():
    result = trim(numbered(10), keep_first=2, keep_last=3)
    assert contents(result) == ["1", "2", "8", "9", "10"]
    assert result.kept == (0, 1, 7, 8, 9)
    assert result.dropped == (2, 3, 4, 5, 6)
    assert result.summarized == ()
    assert result.sources == (0, 1, 7, 8, 9)
    assert result.llm_calls == 0 and result.fallback is None
    assert result.tokens_before == pytest.approx(10 * 4 + 11 / 2.5)
    assert result.tokens_after == pytest.approx(5 * 4 + 6 / 2.5)


@pytest.mark.parametrize(("first", "last"), [(5, 5), (8, 8), (10, 0), (0, 10), (20, 1)])
def test_trim_keeps_everything_once_when_counts_cover_the_list(first, last):
    msgs = numbered(10)
    result = trim(msgs, keep_first=first, keep_last=last)
    assert list(result.messages) == msgs
    assert result.kept == tuple(range(10)) and result.dropped == ()


def test_trim_zero_counts():
    assert trim(numbered(5), keep_first=0, keep_last=0).messages == ()
    assert contents(trim(numbered(5), keep_first=0, keep_last=2)) == ["4", "5"]
    assert contents(trim(numbered(5), keep_first=2, keep_last=0)) == ["1", "2"]


def test_trim_defaults_match_design():
    assert contents(trim(numbered(20))) == ["1", "2"] + [str(i) for i in range(11, 21)]


def test_trim_reuses_input_messages():
    msgs = numbered(10)
    result = trim(msgs, keep_first=1, keep_last=1)
    assert result.messages[0] is msgs[0] and result.messages[1] is msgs[-1]


# --- SLIDING_WINDOW -----------------------------------------------------------------------------------


def test_sliding_window_design_example():
    # tokens from the newest: 120, 200, 180, 250, 300 -> cumulative 120, 320, 500, 750, 1050 > 1000
    oldest_first = [msg_with_tokens(t, label=str(i)) for i, t in enumerate([300, 250, 180, 200, 120])]
    result = sliding_window(oldest_first, max_tokens=1000)
    assert list(result.messages) == oldest_first[1:]
    assert result.kept == (1, 2, 3, 4)
    assert result.dropped == (0,)
    assert result.tokens_before == 1050
    assert result.tokens_after == 750


def test_sliding_window_budget_is_inclusive():
    msgs = [msg_with_tokens(t) for t in (300, 250, 180, 200, 120)]
    assert sliding_window(msgs, max_tokens=1050).kept == (0, 1, 2, 3, 4)
    assert sliding_window(msgs, max_tokens=1049).kept == (1, 2, 3, 4)


def test_sliding_window_stops_at_first_message_that_exceeds():
    # The old small message would fit again but the walk stopped at the big one.
    msgs = [msg_with_tokens(10), msg_with_tokens(900), msg_with_tokens(100)]
    assert sliding_window(msgs, max_tokens=200).kept == (2,)


def test_sliding_window_newest_too_big_keeps_nothing():
    result = sliding_window([msg_with_tokens(50), msg_with_tokens(500)], max_tokens=100)
    assert result.messages == () and result.dropped == (0, 1) and result.tokens_after == 0


def test_sliding_window_empty_input():
    result = sliding_window([], max_tokens=10)
    assert result.messages == () and result.tokens_before == 0


# --- SUMMARIZE ----------------------------------------------------------------------------------------


def test_summarize_at_or_below_threshold_is_unchanged_without_llm_call():
    fake = RecordingSummarizer()
    msgs = numbered(20)
    result = summarize(msgs, threshold=20, keep_last=6, summarizer=fake)
    assert list(result.messages) == msgs
    assert result.llm_calls == 0 and fake.calls == []
    assert result.kept == tuple(range(20))


def test_summarize_above_threshold():
    fake = RecordingSummarizer("the gist")
    msgs = numbered(21)
    result = summarize(msgs, threshold=20, keep_last=6, summarizer=fake)
    summary = result.messages[0]
    assert summary.role is Role.SYSTEM and summary.content == "the gist"
    assert summary.metadata == {"summary": True}
    assert list(result.messages[1:]) == msgs[-6:]
    assert result.sources == (None, 15, 16, 17, 18, 19, 20)
    assert result.summarized == tuple(range(15))
    assert result.kept == tuple(range(15, 21)) and result.dropped == ()
    assert result.llm_calls == 1 and result.fallback is None
    (text, instruction), = fake.calls
    assert instruction == CONTEXT_SUMMARY_INSTRUCTION
    assert text == conversation_text(msgs[:15])
    assert text.startswith("USER: 1\nASSISTANT: 2\n")
    assert result.to_dict()["messages"][0] == {"role": "system", "content": "the gist", "metadata": {"summary": True}}


def test_summarize_cuts_conversation_to_50000_chars():
    fake = RecordingSummarizer()
    msgs = [Message(Role.USER, "x" * 1000) for _ in range(200)]
    summarize(msgs, threshold=20, keep_last=6, summarizer=fake)
    text = fake.calls[0][0]
    assert len(text) == MAX_CONVERSATION_CHARS == 50_000
    assert text == conversation_text(msgs[:194])[:50_000]


@pytest.mark.parametrize("exc", [SummarizerError("timeout"), RuntimeError("boom"), TimeoutError()])
def test_summarize_falls_back_to_first_three_when_summarizer_raises(exc):
    failing = FailingSummarizer(exc)
    msgs = numbered(30)
    result = summarize(msgs, threshold=20, keep_last=6, summarizer=failing)
    assert list(result.messages) == msgs[:3]
    assert result.kept == (0, 1, 2) and result.dropped == tuple(range(3, 30)) and result.summarized == ()
    assert result.llm_calls == 1 and failing.calls == 1
    assert result.fallback.startswith("summarizer failed: ")
    assert result.fallback.endswith("kept the first 3 messages")


def test_summarize_fallback_reason_is_short_and_specific():
    result = summarize(numbered(30), summarizer=FailingSummarizer(SummarizerError("timeout")))
    assert result.fallback == "summarizer failed: timeout; kept the first 3 messages"


@pytest.mark.parametrize("answer", [None, "", "  \n"])
def test_summarize_non_text_or_empty_answer_is_a_failure(answer):
    result = summarize(numbered(30), summarizer=RecordingSummarizer(answer))  # type: ignore[arg-type]
    assert result.fallback is not None and len(result.messages) == 3


def test_summarize_keep_last_covering_everything_needs_no_call():
    fake = RecordingSummarizer()
    result = summarize(numbered(5), threshold=2, keep_last=5, summarizer=fake)
    assert fake.calls == [] and len(result.messages) == 5


# --- COMPOSITE ----------------------------------------------------------------------------------------


def test_composite_maps_indexes_back_to_original_input():
    msgs = numbered(30)
    fake = RecordingSummarizer("S")
    result = composite(
        msgs, steps=["trim", "summarize"], summarizer=fake,
        trim={"keep_first": 2, "keep_last": 20}, summarize={"threshold": 10, "keep_last": 4},
    )
    # trim keeps 0,1 and 10..29 (22 messages); summarize folds the first 18 of those, keeps 26..29
    assert contents(result) == ["S", "27", "28", "29", "30"]
    assert result.sources == (None, 26, 27, 28, 29)
    assert result.kept == (26, 27, 28, 29)
    assert result.summarized == (0, 1) + tuple(range(10, 26))
    assert result.dropped == tuple(range(2, 10))
    assert result.llm_calls == 1
    assert [s.strategy for s in result.steps] == ["TRIM", "SUMMARIZE"]
    assert result.steps[1].kept == tuple(range(18, 22))  # relative to the step's own input
    assert result.tokens_before == result.steps[0].tokens_before
    assert result.tokens_after == result.steps[-1].tokens_after


def test_composite_default_is_summarize_then_sliding_window():
    msgs = [msg_with_tokens(100) for _ in range(30)]
    result = composite(msgs, summarizer=RecordingSummarizer("S"), sliding_window={"max_tokens": 450})
    assert [s.strategy for s in result.steps] == ["SUMMARIZE", "SLIDING_WINDOW"]
    assert result.tokens_after <= 450
    # the summary (4.4 tokens) and the 6 kept messages don't all fit: summary dropped, 4 newest kept
    assert result.kept == (26, 27, 28, 29)
    assert result.summarized == ()  # the summary did not survive, so its sources count as dropped
    assert result.dropped == tuple(range(26))


def test_composite_summary_surviving_a_later_step_keeps_source_none():
    msgs = [msg_with_tokens(100) for _ in range(30)]
    result = composite(msgs, summarizer=RecordingSummarizer("S"), sliding_window={"max_tokens": 4000})
    assert result.sources[0] is None and result.summarized == tuple(range(24))


def test_composite_fallback_is_first_steps_fallback_and_calls_sum():
    result = composite(numbered(30), steps=["summarize", "summarize"], summarizer=FailingSummarizer(),
                       summarize={"threshold": 2, "keep_last": 1})
    assert result.llm_calls == 2
    assert result.fallback == "summarizer failed: timeout; kept the first 3 messages"
    assert result.kept == (0, 1, 2)


# --- apply_context ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["trim", "TRIM", "Trim"])
def test_apply_context_trim_by_name_from_json(name):
    raw = [{"role": "user", "content": str(i)} for i in range(1, 11)]
    result = apply_context(name, raw, {"keep_first": 2, "keep_last": 3})
    assert result.to_dict()["kept"] == [0, 1, 7, 8, 9]
    assert result.strategy == "TRIM"


@pytest.mark.parametrize("name", ["sliding_window", "SLIDING_WINDOW", "sliding-window"])
def test_apply_context_sliding_window_names(name):
    assert apply_context(name, numbered(3), {"max_tokens": 100}).strategy == "SLIDING_WINDOW"


def test_apply_context_unknown_name():
    with pytest.raises(StrategyConfigError) as err:
        apply_context("delete", numbered(3))
    assert err.value.field == "name"


def test_apply_context_summarize_defaults_to_offline_summarizer():
    result = apply_context("summarize", numbered(25))
    assert result.llm_calls == 1 and result.fallback is None and result.messages[0].role is Role.SYSTEM


def test_apply_context_composite_from_json():
    result = apply_context(
        "composite", numbered(30),
        {"steps": ["summarize", "sliding_window"], "summarize": {"threshold": 5}, "sliding_window": {"max_tokens": 30}},
        summarizer=RecordingSummarizer("S"),
    )
    assert result.tokens_after <= 30


def test_to_dict_api_shape():
    data = apply_context("trim", numbered(10), {"keep_first": 2, "keep_last": 3}).to_dict()
    assert set(data) == {"strategy", "format", "messages", "kept", "dropped", "summarized", "cleared",
                         "tokens_before", "tokens_after", "llm_calls", "fallback", "saved_ratio"}
    assert data["messages"][0] == {"role": "user", "content": "1"}
    assert data["tokens_before"] == 44.4 and data["tokens_after"] == 22.4
    assert 0 <= data["saved_ratio"] <= 1
    assert data["fallback"] is None
