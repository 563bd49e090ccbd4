"""Property tests: invariants every context strategy keeps, on arbitrary inputs."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from memoryboard.strategies import (
    Message,
    Role,
    apply_context,
    composite,
    sliding_window,
    summarize,
    total_tokens,
    trim,
)

from .helpers import FailingSummarizer, RecordingSummarizer

counts = st.integers(min_value=0, max_value=30)
messages_st = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(list(Role)),
        content=st.text(max_size=60),
        id=st.none() | st.integers(min_value=1, max_value=10_000),
        metadata=st.none() | st.dictionaries(st.text(max_size=5), st.integers() | st.lists(st.integers(), max_size=3), max_size=3),
    ),
    max_size=40,
)
# JSON-shaped input: mutable dicts with mutable metadata, the case where mutation would hurt most.
json_st = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "ASSISTANT", "System", "tool"]), "content": st.text(max_size=40)},
        optional={"metadata": st.dictionaries(st.text(max_size=4), st.lists(st.integers(), max_size=3), max_size=2)},
    ),
    max_size=30,
)


def assert_partition(result, n):
    parts = result.kept + result.dropped + result.summarized
    assert sorted(parts) == list(range(n))
    for part in (result.kept, result.dropped, result.summarized):
        assert list(part) == sorted(part)


def assert_subsequence(result, msgs):
    assert all(s is not None for s in result.sources)
    assert list(result.sources) == sorted(result.sources)
    assert [msgs[i] for i in result.sources] == list(result.messages)
    assert all(result.messages[j] is msgs[i] for j, i in enumerate(result.sources))


def run_all(msgs, first, last, budget):
    summarizer = RecordingSummarizer("summary")
    return [
        trim(msgs, keep_first=first, keep_last=last),
        sliding_window(msgs, max_tokens=budget),
        summarize(msgs, threshold=first, keep_last=last, summarizer=summarizer),
        summarize(msgs, threshold=first, keep_last=last, summarizer=FailingSummarizer()),
        composite(msgs, summarizer=summarizer, summarize={"threshold": first, "keep_last": last},
                  sliding_window={"max_tokens": budget}),
        composite(msgs, steps=["trim", "summarize", "sliding_window", "trim"], summarizer=summarizer,
                  trim={"keep_first": first, "keep_last": last}, sliding_window={"max_tokens": budget}),
    ]


@settings(max_examples=150, deadline=None)
@given(msgs=messages_st, first=counts, last=counts, budget=st.integers(min_value=1, max_value=400))
def test_strategies_never_mutate_message_input(msgs, first, last, budget):
    before = copy.deepcopy(msgs)
    for result in run_all(msgs, first, last, budget):
        assert_partition(result, len(msgs))
    assert msgs == before


@settings(max_examples=100, deadline=None)
@given(raw=json_st, first=counts, last=counts, budget=st.integers(min_value=1, max_value=400))
def test_strategies_never_mutate_json_input(raw, first, last, budget):
    before = copy.deepcopy(raw)
    for name in ("trim", "sliding_window", "summarize", "composite"):
        result = apply_context(name, raw, None)
        assert_partition(result, len(raw))
    run_all(raw, first, last, budget)
    assert raw == before


@settings(max_examples=200, deadline=None)
@given(msgs=messages_st, first=counts, last=counts)
def test_trim_is_an_order_preserving_subsequence(msgs, first, last):
    result = trim(msgs, keep_first=first, keep_last=last)
    assert_subsequence(result, msgs)
    assert_partition(result, len(msgs))
    assert len(result.messages) == min(len(msgs), first + last)


@settings(max_examples=200, deadline=None)
@given(msgs=messages_st, budget=st.integers(min_value=1, max_value=400))
def test_sliding_window_subsequence_within_budget(msgs, budget):
    result = sliding_window(msgs, max_tokens=budget)
    assert_subsequence(result, msgs)
    assert_partition(result, len(msgs))
    assert result.tokens_after <= budget
    assert result.tokens_after == total_tokens(result.messages)
    assert result.tokens_before == total_tokens(msgs)
    # it is a suffix, and the next older message would not have fit
    k = len(result.messages)
    assert result.kept == tuple(range(len(msgs) - k, len(msgs)))
    if k < len(msgs):
        assert total_tokens(msgs[len(msgs) - k - 1 :]) > budget


@settings(max_examples=100, deadline=None)
@given(msgs=messages_st, first=counts, last=counts, budget=st.integers(min_value=1, max_value=400))
def test_composite_sources_point_to_the_original_input(msgs, first, last, budget):
    result = composite(msgs, steps=["trim", "summarize", "sliding_window"], summarizer=RecordingSummarizer("S"),
                       trim={"keep_first": first, "keep_last": last + 5},
                       summarize={"threshold": first, "keep_last": last},
                       sliding_window={"max_tokens": budget})
    for message, source in zip(result.messages, result.sources):
        if source is None:
            assert message.is_summary
        else:
            assert message is msgs[source]
    assert sorted(s for s in result.sources if s is not None) == list(result.kept)
    assert result.tokens_after <= budget
