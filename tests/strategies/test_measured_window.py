"""SLIDING_WINDOW through apply_context measures every message and builds only the window's
(``MeasuredConversation``): the same answer as reading every message first, the same errors."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryboard.strategies import Message, Role, apply_context, read_conversation, sliding_window
from memoryboard.strategies.context import behind_system_prompt, system_prompt_length
from memoryboard.strategies.errors import StrategyInputError
from memoryboard.strategies.formats import MeasuredConversation

from .traces import anthropic_trace, openai_trace


def read_then_window(messages, max_tokens, *, format=None, keep_system=False):
    """The window as it is without measuring: every message read, then the strategy."""
    conversation = read_conversation(messages, format=format)
    msgs = conversation.messages
    head = system_prompt_length(msgs) if keep_system else 0
    result = behind_system_prompt(sliding_window(msgs[head:], max_tokens=max_tokens), msgs[:head])
    return replace(result, format=conversation.format)


@settings(max_examples=150, deadline=None)
@given(trace=st.one_of(openai_trace(), anthropic_trace()), max_tokens=st.integers(1, 400), keep_system=st.booleans())
def test_the_measured_window_is_the_window_of_the_read_messages(trace, max_tokens, keep_system):
    measured = apply_context("sliding_window", trace, {"max_tokens": max_tokens}, keep_system=keep_system)
    read = read_then_window(trace, max_tokens, keep_system=keep_system)
    assert measured == read  # messages (by value), indexes and tokens
    assert [m.raw for m in measured.messages] == [m.raw for m in read.messages]
    assert measured.to_dict()["messages"] == [trace[i] for i in measured.kept]


@settings(max_examples=100, deadline=None)
@given(trace=st.one_of(openai_trace(), anthropic_trace()))
def test_sizes_are_the_read_messages_sizes(trace):
    measured = MeasuredConversation(trace)
    read = read_conversation(trace)
    assert measured.format == read.format
    assert measured.sizes == [m.size for m in read.messages]
    assert measured.read(0) == read.messages


def test_message_objects_and_stored_rows_are_measured_as_read():
    rows = [
        Message(Role.SYSTEM, "be brief"),
        {"role": "USER", "content": "hi", "id": 3, "metadata": {"k": 1}},
        SimpleNamespace(role="assistant", content="hello", id=4, metadata=None),
        {"role": "user", "content": "x" * 40},
    ]
    measured = MeasuredConversation(rows)
    assert measured.sizes == [m.size for m in read_conversation(rows).messages]
    assert measured.read(0)[0] is rows[0]
    for max_tokens in (1, 10, 20, 40, 1000):
        for keep_system in (False, True):
            assert apply_context("sliding_window", rows, {"max_tokens": max_tokens}, keep_system=keep_system) == (
                read_then_window(rows, max_tokens, keep_system=keep_system))


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"role": [], "content": "x"}, "messages[1].role"),
        ({"role": "robot", "content": "x"}, "messages[1].role"),
        ({"role": "user", "content": 5}, "messages[1].content"),
        ({"role": "tool", "tool_call_id": "", "content": "x"}, "messages[1].tool_call_id"),
        ({"role": "tool", "tool_call_id": 7, "content": "x"}, "messages[1].tool_call_id"),
        ({"role": "user", "content": "x", "id": "7"}, "messages[1].id"),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 1}}]},
         "messages[1].tool_calls[0].function.arguments"),
        ({"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
         "messages[1].tool_calls[0].id"),
        ({"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": {"name": "", "arguments": "{}"}}]},
         "messages[1].tool_calls[0].function.name"),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": "f"}]},
         "messages[1].tool_calls[0].function"),
        ({"role": "assistant", "content": None, "tool_calls": ["c"]}, "messages[1].tool_calls[0]"),
        ({"role": "assistant", "content": 3, "tool_calls": []}, "messages[1].content"),
        (42, "messages[1]"),
    ],
)
def test_a_bad_message_far_outside_the_window_is_named(bad, field):
    trace = [{"role": "system", "content": "s"}, bad] + [{"role": "user", "content": "hello"}] * 50
    with pytest.raises(StrategyInputError) as caught:
        apply_context("sliding_window", trace, {"max_tokens": 20})
    assert caught.value.field == field
    with pytest.raises(StrategyInputError) as again:
        read_conversation(trace)
    assert again.value.field == field


def test_the_first_bad_message_is_the_one_named():
    trace = [{"role": "user", "content": "ok"}, {"role": "user", "content": 1}, {"role": "robot", "content": "x"}]
    with pytest.raises(StrategyInputError) as caught:
        apply_context("sliding_window", trace, {"max_tokens": 5})
    assert caught.value.field == "messages[1].content"


def test_an_anthropic_tool_role_is_refused_even_with_string_content():
    trace = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}]},
             {"role": "tool", "content": "x"}] + [{"role": "user", "content": "hello"}] * 20
    with pytest.raises(StrategyInputError) as caught:
        apply_context("sliding_window", trace, {"max_tokens": 5})
    assert caught.value.field == "messages[1].role"


def test_every_measured_shape_is_built_as_the_reader_builds_it():
    """The window's messages that were measured without being built (plain turns, tool results, assistant
    tool calls of any call type, arguments or input, content null, empty or absent) come back as the reader
    makes them, each the very object sent."""
    trace = [
        {"role": "developer", "content": "rules"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}},
            {"id": "b", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "one"},
        {"role": "tool", "tool_call_id": "b", "content": "two"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "custom", "custom": {"name": "h", "input": "raw text"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "three"},
        {"role": "assistant", "tool_calls": [{"id": "d", "function": {"name": "k", "arguments": "[]"}}],
         "name": "bot"},
        {"role": "tool", "tool_call_id": "d", "content": "four"},
        {"role": "Assistant", "content": "done"},
    ]
    measured = MeasuredConversation(trace)
    assert measured.read(0) == read_conversation(trace).messages
    assert [m.raw for m in measured.read(0)] == trace and all(m.raw is t for m, t in zip(measured.read(0), trace))
    anthropic = [{"role": "user", "content": "hi", "cache": 1}, {"role": "assistant", "content": "hello"}]
    assert MeasuredConversation(anthropic, format="anthropic").read(0) == read_conversation(
        anthropic, format="anthropic").messages
