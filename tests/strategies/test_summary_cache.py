"""Summaries cached by what they cover and extended incrementally: one call per `threshold` new messages."""

from __future__ import annotations

from memoryboard.strategies import Message, Role, apply_context, summarize
from memoryboard.strategies.summary_cache import InMemorySummaryCache

from .helpers import RecordingSummarizer


def grow(turns: int):
    msgs = []
    for i in range(turns):
        msgs.append(Message(Role.USER, f"question {i}"))
        msgs.append(Message(Role.ASSISTANT, f"answer {i}"))
        yield tuple(msgs)


def test_a_long_conversation_costs_one_call_per_threshold_new_messages():
    cache, summarizer = InMemorySummaryCache(), RecordingSummarizer("S")
    states = []
    for msgs in grow(60):  # 120 messages, a turn at a time
        result = summarize(msgs, threshold=10, keep_last=4, summarizer=summarizer, cache=cache)
        states.append(result.summary_cache)
        assert result.llm_calls == (0 if result.summary_cache in (None, "reused") else 1)
        assert len(result.messages) <= 4 + 10 + 1  # the tail grows at most threshold past keep_last
    uncached = RecordingSummarizer("S")
    for msgs in grow(60):
        summarize(msgs, threshold=10, keep_last=4, summarizer=uncached)
    assert len(uncached.calls) == 55  # one a turn once above the threshold
    assert len(summarizer.calls) <= 12 and states.count("new") == 1 and "extended" in states
    # An extension reads the earlier summary and only the messages after it.
    extended = next(text for text, _ in summarizer.calls[1:])
    assert extended.startswith("SUMMARY: S\n") and "question 0" not in extended


def test_a_changed_conversation_does_not_reuse_a_summary_of_other_messages():
    cache, summarizer = InMemorySummaryCache(), RecordingSummarizer("S")
    msgs = tuple(next(m for i, m in enumerate(grow(20)) if i == 19))
    summarize(msgs, threshold=10, keep_last=4, summarizer=summarizer, cache=cache)
    edited = (Message(Role.USER, "something else"),) + msgs[1:]
    result = summarize(edited, threshold=10, keep_last=4, summarizer=summarizer, cache=cache)
    assert result.summary_cache == "new" and len(summarizer.calls) == 2
    other_model = RecordingSummarizer("T")
    other_model.name = "other-model"
    assert summarize(msgs, threshold=10, keep_last=4, summarizer=other_model, cache=cache).summary_cache == "new"


def test_composite_uses_the_cache_in_its_summarize_step():
    cache, summarizer = InMemorySummaryCache(), RecordingSummarizer("S")
    msgs = [m for m in list(grow(30))[-1]]
    params = {"steps": ["summarize", "sliding_window"], "summarize": {"threshold": 10, "keep_last": 4}}
    first = apply_context("composite", msgs, params, summarizer=summarizer, summary_cache=cache)
    again = apply_context("composite", msgs + [Message(Role.USER, "one more")], params, summarizer=summarizer,
                          summary_cache=cache)
    assert first.summary_cache == "new" and again.summary_cache == "reused" and again.llm_calls == 0
    assert again.to_dict()["summary_cache"] == "reused"
