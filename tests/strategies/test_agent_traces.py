"""Properties of every context strategy on random agent traces (OpenAI and Anthropic, tool calls as units)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryboard.strategies import CONTEXT_STRATEGIES, apply_context, read_conversation, total_tokens
from memoryboard.strategies.errors import StrategyInputError

from .helpers import FailingSummarizer, RecordingSummarizer
from .traces import anthropic_trace, assert_units_whole, openai_trace

small = st.integers(0, 12)
params_for = {
    "TRIM": st.fixed_dictionaries({"keep_first": small, "keep_last": small}),
    "SUMMARIZE": st.fixed_dictionaries({"threshold": small, "keep_last": small}),
    "SLIDING_WINDOW": st.fixed_dictionaries({"max_tokens": st.integers(1, 400)}),
    "CLEAR_TOOL_RESULTS": st.fixed_dictionaries(
        {"trigger_tokens": st.integers(0, 200), "keep": st.integers(0, 4),
         "exclude_tools": st.lists(st.sampled_from(["search", "run_sql"]), max_size=1)}
    ),
    "COMPOSITE": st.fixed_dictionaries(
        {
            "steps": st.lists(st.sampled_from(["trim", "summarize", "sliding_window", "clear_tool_results"]),
                              min_size=1, max_size=3),
            "trim": st.fixed_dictionaries({"keep_first": small, "keep_last": small}),
            "summarize": st.fixed_dictionaries({"threshold": small, "keep_last": small}),
            "sliding_window": st.fixed_dictionaries({"max_tokens": st.integers(1, 400)}),
            "clear_tool_results": st.fixed_dictionaries({"trigger_tokens": st.integers(0, 200)}),
        }
    ),
}
traces = st.one_of(openai_trace(), anthropic_trace())


@st.composite
def strategy_and_params(draw):
    name = draw(st.sampled_from(CONTEXT_STRATEGIES))
    return name, draw(params_for[name])


@settings(max_examples=300, deadline=None)
@given(trace=traces, choice=strategy_and_params(), keep_system=st.booleans(), fails=st.booleans())
def test_every_strategy_keeps_units_whole_and_messages_untouched(trace, choice, keep_system, fails):
    name, params = choice
    snapshot = copy.deepcopy(trace)
    summarizer = FailingSummarizer() if fails else RecordingSummarizer("S")
    result = apply_context(name, trace, params, summarizer=summarizer, keep_system=keep_system)
    out = result.output()

    assert trace == snapshot, "the input was mutated"
    # Indexes partition the input.
    groups = [result.kept, result.dropped, result.summarized, result.cleared]
    assert sorted(i for g in groups for i in g) == list(range(len(trace)))
    # A kept message is the very object that came in; a cleared one differs only in result content.
    for message, source in zip(out, result.sources):
        if source in result.kept:
            assert message is trace[source]
        elif source is not None:
            assert source in result.cleared
            assert set(message) == set(trace[source])
            assert message["role"] == trace[source]["role"]
    assert_units_whole(trace, out)
    # Order is kept.
    sources = [s for s in result.sources if s is not None]
    assert sources == sorted(sources)
    # The answer is valid input again, in the same format.
    again = read_conversation(out, format=result.format)
    assert total_tokens(again.messages) == pytest.approx(result.tokens_after)
    if name == "SLIDING_WINDOW" and not keep_system:
        assert result.tokens_after <= params["max_tokens"]


@settings(max_examples=100, deadline=None)
@given(trace=openai_trace(), budget=st.integers(1, 300))
def test_sliding_window_budget_counts_whole_units(trace, budget):
    result = apply_context("sliding_window", trace, {"max_tokens": budget})
    assert result.tokens_after <= budget
    # The first unit that did not fit would have exceeded the budget: nothing fits in between.
    if result.dropped:
        first_kept = result.kept[0] if result.kept else len(trace)
        msgs = read_conversation(trace).messages
        unit_start = first_kept - 1
        while unit_start > 0 and (msgs[unit_start].result_ids or False):
            unit_start -= 1
        assert total_tokens(msgs[unit_start:]) > budget


def test_format_detection_and_named_format():
    anthropic = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]
    assert read_conversation(anthropic).format == "anthropic"
    assert read_conversation([{"role": "user", "content": "hi"}]).format == "openai"
    assert read_conversation([{"role": "user", "content": "hi"}], format="Anthropic").format == "anthropic"
    mixed = [anthropic[0], {"role": "tool", "tool_call_id": "a", "content": "r"}]
    with pytest.raises(StrategyInputError) as err:
        read_conversation(mixed)
    assert err.value.field == "messages"


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]},
         "messages[0].tool_calls[0].id"),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": {}}}]},
         "messages[0].tool_calls[0].function.arguments"),
        ({"role": "user", "content": None}, "messages[0].content"),
        ({"role": "user", "content": [{"type": "text"}]}, "messages[0].content[0].text"),
        ({"role": "user", "content": [{"text": "x"}]}, "messages[0].content[0].type"),
        ({"role": "user", "content": 5}, "messages[0].content"),
        ({"role": "tool", "tool_call_id": 5, "content": "x"}, "messages[0].tool_call_id"),
        ({"role": "user", "content": "x", "tool_calls": []}, "messages[0].tool_calls"),
    ],
)
def test_bad_openai_shapes_name_the_field(message, field):
    with pytest.raises(StrategyInputError) as err:
        read_conversation([message], format="openai")
    assert err.value.field == field


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}, "messages[0].content[0].id"),
        ({"role": "user", "content": [{"type": "tool_result"}]}, "messages[0].content[0].tool_use_id"),
        ({"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f"}]}, "messages[0].content[0].type"),
        ({"role": "tool", "content": "x"}, "messages[0].role"),
        ({"role": "user"}, "messages[0].content"),
    ],
)
def test_bad_anthropic_shapes_name_the_field(message, field):
    with pytest.raises(StrategyInputError) as err:
        read_conversation([message], format="anthropic")
    assert err.value.field == field


def test_issue_example_react_request_round_trips():
    """The issue's report: null content with tool_calls, then tool results; parts as content."""
    trace = [
        {"role": "system", "content": "You are a ReAct agent."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "tool", "tool_call_id": "c2", "content": "24C", "name": "get_weather"},
        {"role": "assistant", "content": "Paris 18C, Rome 24C."},
    ]
    # Keeping the last 2 messages would split the unit: the unit is kept whole.
    result = apply_context("sliding_window", trace, {"max_tokens": 100000})
    assert result.output() == trace
    trimmed = apply_context("trim", trace, {"keep_first": 1, "keep_last": 2})
    assert trimmed.kept == (0, 2, 3, 4, 5)
    assert trimmed.output()[1] is trace[2]
    assert trimmed.output()[3] is trace[4]


def test_clear_tool_results_keeps_newest_and_excluded():
    trace = [{"role": "user", "content": "go"}]
    for i, tool in enumerate(["search", "run_sql", "search", "search"]):
        trace.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": "{}"}}]})
        trace.append({"role": "tool", "tool_call_id": f"c{i}", "content": "r" * 200, "x": i})
    result = apply_context("clear_tool_results", trace, {"trigger_tokens": 10, "keep": 1, "exclude_tools": ["run_sql"]})
    out = result.output()
    assert result.cleared == (2, 6)
    assert out[2] == {"role": "tool", "tool_call_id": "c0", "content": "[tool result cleared]", "x": 0}
    assert out[4] is trace[4] and out[8] is trace[8]  # excluded tool; newest result
    assert trace[2]["content"] == "r" * 200
    assert result.tokens_after < result.tokens_before
    # Below the trigger nothing changes.
    assert apply_context("clear_tool_results", trace, {"trigger_tokens": 10**6}).cleared == ()


def test_clear_tool_results_anthropic_blocks():
    trace = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "search", "input": {}},
                                          {"type": "tool_use", "id": "b", "name": "run_sql", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x" * 300},
                                     {"type": "tool_result", "tool_use_id": "b", "content": "y" * 300},
                                     {"type": "text", "text": "and?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "search", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "z"}]},
    ]
    result = apply_context("clear_tool_results", trace, {"trigger_tokens": 0, "keep": 1, "exclude_tools": ["run_sql"]})
    assert result.format == "anthropic" and result.cleared == (1,)
    blocks = result.output()[1]["content"]
    assert blocks[0]["content"] == "[tool result cleared]" and blocks[1]["content"] == "y" * 300
    assert blocks[2] == {"type": "text", "text": "and?"}


def test_tokens_of_non_text_content():
    from memoryboard.strategies.tokens import IMAGE_TOKENS

    image = {"role": "user", "content": [{"type": "text", "text": "xxxxx"},
                                         {"type": "image_url", "image_url": {"url": "http://x"}}]}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "abcde", "arguments": "12345"}}]}
    msgs = read_conversation([image, call]).messages
    assert total_tokens(msgs[:1]) == 5 / 2.5 + IMAGE_TOKENS + 4
    assert total_tokens(msgs[1:]) == 10 / 2.5 + 4
