"""The replay counts what the runtime really sends: per call, the tokens of the request the model got."""

from __future__ import annotations

import pytest

from memoryboard.agent.runtime import SYSTEM_PROMPT
from memoryboard.agent.service import agent_chat
from memoryboard.conversations import context_replay
from memoryboard.agents_config import reset_agents_config
from memoryboard.models import ChatMessage
from memoryboard.strategies import read_conversation, total_tokens

pytestmark = pytest.mark.django_db

QUESTIONS = [
    "What is a B-tree?", "How does Redis evict keys when memory is full?", "我应该用哪种淘汰策略？",
    "Explain write-ahead logging in two sentences.", "What is the difference between TCP and UDP?",
    "Summarize what we discussed.", "And which database did I mention first?",
]


@pytest.mark.parametrize("strategy, params", [
    ("TRIM", {"keep_first": 1, "keep_last": 2}),
    ("SLIDING_WINDOW", {"max_tokens": 60}),
    ("CLEAR_TOOL_RESULTS", {"trigger_tokens": 50, "keep": 1}),
    # A knob of LangChain's middleware through agents.yaml and the runtime: both triggers must hold.
    ("SUMMARIZE", {"threshold": 2, "keep_last": 2, "trigger_tokens": 100000, "trigger_combine": "all"}),
])
def test_replay_sent_tokens_equal_what_the_runtime_sent(settings, tmp_path, openai_settings, alice, strategy, params):
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agent:\n  agents:\n    t:\n      name: Tester\n      memory-tools: false\n"
        "      long-term-memory: {enabled: false}\n"
        f"      context: {{strategy: {strategy}, params: {params!r}}}\n".replace("'", "")
    )
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    conversation = None
    for question in QUESTIONS:
        conversation = agent_chat(user=alice, agent_id="t", conversation_id=conversation, message=question).conversation_id
    sent = [round(total_tokens(read_conversation(request["messages"]).messages))
            for request in openai_settings.chat_requests()]
    rows = ChatMessage.objects.filter(conversation_id=conversation).order_by("id")
    stored = [{"role": "system", "content": SYSTEM_PROMPT.format(name="Tester")}]
    stored += [{"role": row.role.lower(), "content": row.content} for row in rows]
    (replayed,) = context_replay(stored, [(strategy, params)])
    assert len(replayed.calls) == len(QUESTIONS) == len(sent)
    assert [c.sent_tokens for c in replayed.calls] == sent
    assert replayed.totals["sent_tokens"] == sum(sent)
    if params.get("trigger_combine") == "all":  # more than 2 messages, but never 100,000 tokens: no summary
        assert replayed.totals["summary_calls"] == 0 and sent == sorted(sent)
