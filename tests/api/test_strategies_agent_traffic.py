"""The context endpoint on the messages agents exchange: OpenAI tool calls, parts, Anthropic blocks."""

from __future__ import annotations

import pytest

from tests.api.helpers import error_of
from tests.strategies.traces import assert_units_whole

pytestmark = pytest.mark.django_db

REACT = [
    {"role": "system", "content": "You are a ReAct agent."},
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}],
     "x_vendor": {"trace": 7}},
    {"role": "tool", "tool_call_id": "c1", "content": "18C", "name": "get_weather"},
    {"role": "assistant", "content": "It is 18C in Paris."},
]


def post(client, name, body):
    return client.post(f"/api/v1/strategies/context/{name}/apply", body, format="json")


def test_the_issues_react_request_is_answered_field_for_field(as_user, alice):
    response = post(as_user(alice), "sliding_window", {"messages": REACT, "params": {"max_tokens": 100000}})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["messages"] == REACT and body["format"] == "openai"


def test_a_cut_never_leaves_a_result_without_its_call(as_user, alice):
    # keep_last=2 would keep the tool result without its call: the unit is kept whole.
    response = post(as_user(alice), "trim", {"messages": REACT, "params": {"keep_first": 1, "keep_last": 2}})
    body = response.json()
    assert body["kept"] == [0, 2, 3, 4]
    assert_units_whole(REACT, body["messages"])
    # A budget too small for the unit drops it whole.
    response = post(as_user(alice), "sliding_window", {"messages": REACT, "params": {"max_tokens": 20}})
    assert response.json()["messages"] == REACT[4:]


def test_bad_shapes_are_400_naming_the_field(as_user, alice):
    bad = [dict(m) for m in REACT]
    bad[2] = {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    error = error_of(post(as_user(alice), "trim", {"messages": bad}))
    assert list(error["fields"]) == ["messages[2].tool_calls[0].id"]
    error = error_of(post(as_user(alice), "trim", {"messages": REACT, "format": "gemini"}))
    assert "format" in error["fields"]
    error = error_of(post(as_user(alice), "trim", {"messages": REACT, "system": "x"}))
    assert "system" in error["fields"]
    error = error_of(post(as_user(alice), "trim", {"messages": REACT, "keep_system": "yes"}))
    assert "keep_system" in error["fields"]


@pytest.mark.parametrize("bad, field", [
    ({"role": "user", "content": 5}, "messages[1].content"),
    ({"role": [], "content": "x"}, "messages[1].role"),
    ({"role": "tool", "tool_call_id": 7, "content": "x"}, "messages[1].tool_call_id"),
])
def test_a_bad_message_the_window_drops_is_still_400_naming_it(as_user, alice, bad, field):
    messages = [REACT[0], bad] + [{"role": "user", "content": "hello"}] * 200
    response = post(as_user(alice), "sliding_window", {"messages": messages, "params": {"max_tokens": 50}})
    assert response.status_code == 400
    assert list(error_of(response)["fields"]) == [field]


def test_anthropic_with_top_level_system(as_user, alice):
    turns = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
                                          {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Rome"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "24C"}]},
        {"role": "assistant", "content": "24C in Rome."},
    ]
    system = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    response = post(as_user(alice), "trim", {"messages": turns, "system": system, "params": {"keep_first": 0, "keep_last": 2}})
    body = response.json()
    assert response.status_code == 200, body
    assert body["format"] == "anthropic" and body["system"] == system
    assert body["messages"] == turns[1:]  # the result's unit is kept whole


def test_keep_system_acts_after_the_system_prompt(as_user, alice):
    messages = [{"role": "system", "content": "prompt"}] + [{"role": "user", "content": str(i)} for i in range(10)]
    body = post(as_user(alice), "trim", {"messages": messages, "keep_system": True,
                                          "params": {"keep_first": 0, "keep_last": 2}}).json()
    assert body["kept"] == [0, 9, 10]


def test_clear_tool_results_over_the_api(as_user, alice):
    messages = [REACT[0], REACT[1]]
    for i in range(5):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "search", "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "r" * 500})
    body = post(as_user(alice), "clear_tool_results", {"messages": messages,
                                                        "params": {"trigger_tokens": 100, "keep": 2}}).json()
    assert body["cleared"] == [3, 5, 7]
    assert [m["content"] for m in body["messages"][3:8:2]] == ["[tool result cleared]"] * 3
    assert body["messages"][9] == messages[9]


def test_large_answers_give_index_ranges(as_user, alice):
    messages = [{"role": "user", "content": "q"} for _ in range(3000)]
    body = post(as_user(alice), "trim", {"messages": messages, "params": {"keep_first": 1, "keep_last": 5}}).json()
    assert "dropped" not in body and body["dropped_ranges"] == [[1, 2994]]
    assert body["kept"] == [0, 2995, 2996, 2997, 2998, 2999]


def test_the_cycle_collector_is_as_it_was_after_a_context_request(as_user, alice):
    import gc

    client = as_user(alice)
    assert gc.isenabled()
    assert post(client, "sliding_window", {"messages": REACT, "params": {"max_tokens": 50}}).status_code == 200
    assert gc.isenabled()
    assert post(client, "sliding_window", {"messages": [{"role": "user"}]}).status_code == 400
    assert gc.isenabled()
    gc.disable()
    try:
        assert post(client, "sliding_window", {"messages": REACT}).status_code == 200
        assert not gc.isenabled()  # left off, as the caller had it
    finally:
        gc.enable()
