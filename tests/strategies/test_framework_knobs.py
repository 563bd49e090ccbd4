"""The knobs agent frameworks expose, in the one strategy module: LangChain's combined summary triggers,
Anthropic's and LangChain's tool-result clearing (placeholder), the OpenAI Agents SDK's ToolOutputTrimmer
(recent turns, longer than, preview) and Anthropic's clearing of old thinking blocks."""

from __future__ import annotations

import pytest

from memoryboard.strategies import StrategyConfigError, apply_context, parse_params
from memoryboard.strategies.reasons import reasons
from memoryboard.strategies.formats import read_conversation

from .helpers import RecordingSummarizer


def _chat(turns: int) -> list[dict]:
    out = []
    for n in range(turns):
        out += [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
    return out


def test_summary_triggers_combine_with_any_or_all():
    messages = _chat(6)  # 12 messages, a few dozen tokens
    params = {"threshold": 4, "keep_last": 2, "trigger_tokens": 10_000}
    anyone = apply_context("summarize", messages, params, summarizer=RecordingSummarizer())
    assert anyone.summarized  # more than 4 messages is enough
    every = apply_context("summarize", messages, {**params, "trigger_combine": "all"},
                          summarizer=RecordingSummarizer())
    assert not every.summarized and every.llm_calls == 0  # the token trigger does not hold
    low = apply_context("summarize", messages, {**params, "trigger_tokens": 10, "trigger_combine": "all"},
                        summarizer=RecordingSummarizer())
    assert low.summarized


def _tool_trace(sizes: list[int]) -> list[dict]:
    out = []
    for n, size in enumerate(sizes):
        out += [{"role": "user", "content": f"question {n}"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"c{n}", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": f"c{n}", "content": f"{n}" * size},
                {"role": "assistant", "content": f"answer {n}"}]
    return out


def test_tool_output_trimmer_knobs_recent_turns_longer_than_and_preview():
    messages = _tool_trace([800, 50, 800, 800])
    result = apply_context("clear_tool_results", messages, {
        "trigger_tokens": 0, "keep": 0, "recent_turns": 2, "max_output_chars": 500, "preview_chars": 20,
        "placeholder": "[trimmed]"})
    # Results at 2, 6, 10, 14: the last two turns (10, 14) stay, the short one (6) is not longer than 500.
    assert result.cleared == (2,)
    trimmed = result.to_dict()["messages"][2]["content"]
    assert trimmed == "0" * 20 + "\n[trimmed]"
    assert result.to_dict()["messages"][6]["content"] == "1" * 50


def test_the_placeholder_text_is_a_parameter_and_is_checked():
    result = apply_context("clear_tool_results", _tool_trace([400, 400]), {"trigger_tokens": 0, "keep": 1,
                                                                           "placeholder": "(gone)"})
    assert result.to_dict()["messages"][2]["content"] == "(gone)"
    for params, field in (({"placeholder": ""}, "placeholder"), ({"recent_turns": -1}, "recent_turns"),
                          ({"preview_chars": "x"}, "preview_chars"), ({"clear_thinking": "yes"}, "clear_thinking")):
        with pytest.raises(StrategyConfigError) as error:
            parse_params("clear_tool_results", params)
        assert error.value.field == field
    with pytest.raises(StrategyConfigError) as error:
        parse_params("composite", {"summarize": {"trigger_combine": "some"}})
    assert error.value.field == "summarize.trigger_combine"


def _thinking_trace(turns: int) -> list[dict]:
    out = []
    for n in range(turns):
        out += [{"role": "user", "content": f"q{n}"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t" * 300, "signature": "s"},
                                                  {"type": "text", "text": f"a{n}"}]}]
    return out


def test_old_thinking_blocks_are_cleared_keeping_the_last_turns():
    messages = _thinking_trace(4)
    result = apply_context("clear_tool_results", messages, {"trigger_tokens": 0, "clear_thinking": True,
                                                            "keep_thinking_turns": 2}, format="anthropic")
    assert result.cleared == (1, 3)
    out = result.to_dict()["messages"]
    assert [b["type"] for b in out[1]["content"]] == ["text"] and out[1]["content"][0]["text"] == "a0"
    assert [b["type"] for b in out[5]["content"]] == ["thinking", "text"]
    assert result.tokens_after < result.tokens_before
    assert set(reasons(result, read_conversation(messages, format="anthropic").messages).values()) == {"old_thinking"}
    untouched = apply_context("clear_tool_results", messages, {"trigger_tokens": 0}, format="anthropic")
    assert untouched.cleared == ()


def test_agents_yaml_takes_the_new_knobs_and_names_a_bad_one():
    import yaml

    from memoryboard.agents_config import AgentConfigError, parse_agents_config

    good = yaml.safe_load("""
agent:
  agents:
    coder:
      context:
        strategy: COMPOSITE
        params:
          steps: [CLEAR_TOOL_RESULTS, SUMMARIZE]
          clear_tool_results: {recent_turns: 2, max_output_chars: 500, preview_chars: 200, placeholder: "[trimmed]",
                               clear_thinking: true, keep_thinking_turns: 1}
          summarize: {trigger_tokens: 8000, threshold: 40, trigger_combine: all}
""")
    params = parse_agents_config(good).get("coder").context_params
    assert params["clear_tool_results"]["preview_chars"] == 200 and params["summarize"]["trigger_combine"] == "all"
    bad = yaml.safe_load("""
agent:
  agents:
    coder:
      context: {strategy: CLEAR_TOOL_RESULTS, params: {preview_chars: -5}}
""")
    with pytest.raises(AgentConfigError) as error:
        parse_agents_config(bad)
    assert "preview_chars" in str(error.value)
