"""The anchors' knobs: CLEAR_TOOL_RESULTS as Anthropic's clear_tool_uses, SUMMARIZE as LangChain's middleware."""

from __future__ import annotations

import json

import pytest

from memoryboard.strategies import StrategyConfigError, apply_context, plan_memory
from memoryboard.strategies.summarizer import CONTEXT_SUMMARY_INSTRUCTION

from .helpers import RecordingSummarizer, numbered


def _openai_tool_trace(results: int, size: int = 500) -> list[dict]:
    messages = [{"role": "user", "content": "find it"}]
    for n in range(results):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "search", "arguments": json.dumps({"q": "x" * 200})}}]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "r" * size},
        ]
    return messages


def test_clear_at_least_clears_nothing_when_too_little_would_be_freed():
    messages = _openai_tool_trace(2)  # one result to clear: ~ 200 tokens freed
    some = apply_context("clear_tool_results", messages, {"trigger_tokens": 10, "keep": 1})
    assert some.cleared == (2,)
    freed = some.tokens_before - some.tokens_after
    none = apply_context("clear_tool_results", messages, {"trigger_tokens": 10, "keep": 1,
                                                          "clear_at_least": int(freed) + 1})
    assert none.cleared == () and none.messages == tuple(none.messages)
    assert none.tokens_after == none.tokens_before
    enough = apply_context("clear_tool_results", messages, {"trigger_tokens": 10, "keep": 1,
                                                            "clear_at_least": int(freed) - 1})
    assert enough.cleared == (2,)


def test_clear_tool_inputs_empties_the_arguments_of_the_cleared_calls_only():
    messages = _openai_tool_trace(3)
    result = apply_context("clear_tool_results", messages, {"trigger_tokens": 10, "keep": 1,
                                                            "clear_tool_inputs": True})
    out = result.to_dict()["messages"]
    # Calls 0 and 1 were cleared: their arguments are "{}", call 2 (kept) keeps its arguments.
    assert out[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert out[3]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert out[5]["tool_calls"][0]["function"] == messages[5]["tool_calls"][0]["function"]
    assert out[1]["tool_calls"][0]["id"] == "c0" and out[1]["tool_calls"][0]["function"]["name"] == "search"
    assert result.cleared == (1, 2, 3, 4)
    assert messages[1]["tool_calls"][0]["function"]["arguments"] != "{}"  # the input is not modified
    without = apply_context("clear_tool_results", messages, {"trigger_tokens": 10, "keep": 1})
    assert result.tokens_after < without.tokens_after


def test_clear_tool_inputs_in_anthropic_blocks():
    messages = [{"role": "user", "content": "go"}]
    for n in range(2):
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "search",
                                               "input": {"q": "y" * 300}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "z" * 400}]},
        ]
    result = apply_context("clear_tool_results", messages, {"trigger_tokens": 10, "keep": 1,
                                                            "clear_tool_inputs": True}, format="anthropic")
    out = result.to_dict()["messages"]
    assert out[1]["content"][0]["input"] == {} and out[1]["content"][0]["id"] == "t0"
    assert out[3]["content"][0]["input"] == {"q": "y" * 300}


def test_summarize_triggers_on_tokens_or_a_share_of_the_window():
    messages = numbered(10)  # 10 short messages: below the message threshold of 20
    summarizer = RecordingSummarizer()
    quiet = apply_context("summarize", messages, {"keep_last": 2}, summarizer=summarizer)
    assert quiet.summarized == () and summarizer.calls == []
    tokens = quiet.tokens_before
    by_tokens = apply_context("summarize", messages, {"keep_last": 2, "trigger_tokens": int(tokens) - 1},
                              summarizer=summarizer)
    assert by_tokens.summarized == tuple(range(8))
    by_share = apply_context("summarize", messages, {"keep_last": 2, "trigger_fraction": 0.5,
                                                     "window_tokens": int(tokens)}, summarizer=summarizer)
    assert by_share.summarized == tuple(range(8))
    not_yet = apply_context("summarize", messages, {"keep_last": 2, "trigger_fraction": 0.5,
                                                    "window_tokens": int(tokens) * 3}, summarizer=summarizer)
    assert not_yet.summarized == ()


def test_summary_prompt_is_what_the_summarizer_gets_in_context_and_memory():
    summarizer = RecordingSummarizer()
    apply_context("summarize", numbered(30), {"summary_prompt": "Keep names and dates."}, summarizer=summarizer)
    assert summarizer.calls[-1][1] == "Keep names and dates."
    apply_context("summarize", numbered(30), {}, summarizer=summarizer)
    assert summarizer.calls[-1][1] == CONTEXT_SUMMARY_INSTRUCTION
    rows = numbered(30, ids=True)
    plan_memory("summarize", rows, {"summary_prompt": "Only preferences."}, summarizer=summarizer)
    assert summarizer.calls[-1][1] == "Only preferences."


@pytest.mark.parametrize("params, field", [
    ({"trigger_fraction": 1.5, "window_tokens": 1000}, "trigger_fraction"),
    ({"trigger_fraction": 0.5}, "window_tokens"),
    ({"summary_prompt": 5}, "summary_prompt"),
    ({"summary_prompt": "x" * 5000}, "summary_prompt"),
])
def test_bad_summarize_knobs_name_the_field(params, field):
    with pytest.raises(StrategyConfigError) as error:
        apply_context("summarize", numbered(3), params)
    assert error.value.field == field


def test_the_knobs_work_inside_composite():
    messages = _openai_tool_trace(3)
    result = apply_context("composite", messages, {
        "steps": ["clear_tool_results"],
        "clear_tool_results": {"trigger_tokens": 10, "keep": 1, "clear_tool_inputs": True, "clear_at_least": 1},
    })
    assert result.cleared == (1, 2, 3, 4)
    with pytest.raises(StrategyConfigError) as error:
        apply_context("composite", messages, {"clear_tool_results": {"clear_tool_inputs": "yes"}})
    assert error.value.field == "clear_tool_results.clear_tool_inputs"


def test_agents_yaml_takes_the_knobs_and_names_a_bad_one():
    import yaml

    from memoryboard.agents_config import AgentConfigError, parse_agents_config

    good = yaml.safe_load("""
agent:
  agents:
    coder:
      context:
        strategy: CLEAR_TOOL_RESULTS
        params: {trigger_tokens: 8000, keep: 2, clear_at_least: 2000, clear_tool_inputs: true, exclude_tools: [docs]}
""")
    agent = parse_agents_config(good).get("coder")
    assert agent.context_params["clear_at_least"] == 2000 and agent.context_params["clear_tool_inputs"] is True
    bad = yaml.safe_load("""
agent:
  agents:
    coder:
      context: {strategy: SUMMARIZE, params: {trigger_fraction: 0.8}}
""")
    with pytest.raises(AgentConfigError) as error:
        parse_agents_config(bad)
    assert "window_tokens" in str(error.value)
