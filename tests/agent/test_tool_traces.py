"""The runtime's message handling on real agent traffic: OpenAI messages with tool calls through the
before-model chain, sent with the real ``openai`` client to the fake server that validates them."""

from __future__ import annotations

import copy

import openai
import pytest

from memoryboard.agent.hooks import SummarizationHook
from memoryboard.agent.interceptors import ChainContext, ContextEditingInterceptor, run_before_model_chain
from memoryboard.agent.runtime import history_messages
from memoryboard.agents_config import get_agents_config, reset_agents_config
from memoryboard.models import ChatMessage
from tests.strategies.traces import assert_units_whole


def react_trace(exchanges: int, size: int = 200) -> list[dict]:
    out = [{"role": "system", "content": "You are a ReAct agent."},
           {"role": "user", "content": [{"type": "text", "text": "Plan my trip."}]}]
    for i in range(exchanges):
        calls = [{"id": f"c{i}a", "type": "function", "function": {"name": "search", "arguments": '{"q": "a"}'}},
                 {"id": f"c{i}b", "type": "function", "function": {"name": "weather", "arguments": '{"q": "b"}'}}]
        out.append({"role": "assistant", "content": None, "tool_calls": calls, "x_trace": i})
        out.append({"role": "tool", "tool_call_id": f"c{i}b", "content": "w" * size})
        out.append({"role": "tool", "tool_call_id": f"c{i}a", "content": "s" * size, "name": "search"})
    return out


def agent_with(settings, tmp_path, context: str):
    path = tmp_path / "agents.yaml"
    path.write_text(f"agent:\n  agents:\n    t: {{context: {context}}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    return get_agents_config().get("t")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "context",
    [
        "{strategy: TRIM, params: {keep_first: 2, keep_last: 2}}",
        "{strategy: SLIDING_WINDOW, params: {max_tokens: 400}}",
        "{strategy: SUMMARIZE, params: {threshold: 5, keep_last: 1}}",
        "{strategy: clear-tool-results, params: {trigger_tokens: 100, keep: 2, exclude_tools: [weather]}}",
        "{strategy: COMPOSITE, params: {steps: [CLEAR_TOOL_RESULTS, SUMMARIZE, SLIDING_WINDOW],"
        " clear_tool_results: {trigger_tokens: 100}, summarize: {threshold: 6, keep_last: 3},"
        " sliding_window: {max_tokens: 300}}}",
    ],
)
def test_the_chain_sends_valid_tool_traffic(settings, tmp_path, openai_server, context):
    agent = agent_with(settings, tmp_path, context)
    trace = react_trace(8)
    snapshot = copy.deepcopy(trace)
    ctx = ChainContext(agent=agent)
    out = run_before_model_chain([ContextEditingInterceptor(), SummarizationHook(None, threshold=2000)], trace, ctx)
    assert trace == snapshot
    assert out[0] is trace[0]  # the system prompt is kept as it came
    assert out[-1] is trace[-1]  # the newest results are always sent
    assert len(out) < len(trace) or any(m.get("content") == "[tool result cleared]" for m in out)
    assert_units_whole(trace, out)
    api = openai.OpenAI(base_url=openai_server.base_url, api_key="k", timeout=5, max_retries=0)
    api.chat.completions.create(model="fake-model", messages=out)
    assert openai_server.chat_requests()[-1]["messages"] == out


def test_emergency_hard_cut_keeps_units_whole():
    trace = react_trace(30)
    hook = SummarizationHook(None, threshold=1500)
    out = hook.intercept(trace, ChainContext(agent=None))
    assert hook.last_action == "hard cut"
    assert out[0] is trace[0] and out[-3:] == trace[-3:]
    assert_units_whole(trace, out)


def _row(conversation, role, content, metadata=None):
    return ChatMessage.objects.create(conversation_id=conversation, agent_id="chat", user_id="1", role=role,
                                      content=content, metadata=metadata)


@pytest.mark.django_db
def test_history_replays_stored_tool_calls_as_whole_units(openai_server):
    _row("h", "TOOL", "orphan: its call was cut off", {"tool_call_id": "gone"})
    _row("h", "USER", "weather?")
    _row("h", "ASSISTANT", "", {"tool_calls": [{"id": "c1", "type": "function",
                                                "function": {"name": "weather", "arguments": "{}"}}]})
    _row("h", "TOOL", "18C", {"tool_call_id": "c1"})
    _row("h", "ASSISTANT", "It is 18C.", {"tool_calls": [{"name": "memory_save", "arguments": {}, "result": {}}]})
    _row("h", "ASSISTANT", "checking", {"tool_calls": [{"id": "c2", "name": "weather", "arguments": "{}"}]})
    history = history_messages(list(ChatMessage.objects.filter(conversation_id="h").order_by("id")))
    assert history == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "content": "18C", "tool_call_id": "c1"},
        {"role": "assistant", "content": "It is 18C."},
        {"role": "assistant", "content": "checking"},  # its result is missing: the call is not replayed
    ]
    api = openai.OpenAI(base_url=openai_server.base_url, api_key="k", timeout=5, max_retries=0)
    api.chat.completions.create(model="fake-model", messages=history + [{"role": "user", "content": "thanks"}])
