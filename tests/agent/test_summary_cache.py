"""The runtime's SUMMARIZE through the summary cache table: one summary call per `threshold` new messages,
said in the turn's notes, the context window viewer and the playground."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryboard.agent.interceptors import ChainContext, ContextEditingInterceptor
from memoryboard.agents_config import get_agents_config, reset_agents_config
from memoryboard.models import ChatMessage, SummaryCacheEntry
from tests.strategies.helpers import RecordingSummarizer

pytestmark = pytest.mark.django_db


@pytest.fixture
def summarizer(monkeypatch):
    recorder = RecordingSummarizer("the summary")
    monkeypatch.setattr("memoryboard.conversations._summarizer", lambda: recorder)
    return recorder


def agent(settings, tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text("agent:\n  agents:\n    t: {context: {strategy: COMPOSITE, params: {steps: [SUMMARIZE, SLIDING_WINDOW],"
                    " summarize: {threshold: 10, keep_last: 4}, sliding_window: {max_tokens: 100000}}}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    return get_agents_config().get("t")


def test_turns_reuse_and_extend_the_cached_summary(settings, tmp_path, summarizer):
    config = agent(settings, tmp_path)
    history = [{"role": "system", "content": "prompt"}]
    notes = []
    for turn in range(40):
        history.append({"role": "user", "content": f"question {turn}"})
        context = ChainContext(agent=config, conversation_id="conv-1")
        ContextEditingInterceptor().intercept(history, context)
        notes.extend(context.notes)
        history.append({"role": "assistant", "content": f"answer {turn}"})
    # 80 messages: without the cache one summary a turn above the threshold (~35 calls)
    assert 1 <= len(summarizer.calls) <= 8
    assert SummaryCacheEntry.objects.filter(conversation_id="conv-1").count() == len(summarizer.calls)
    assert "context: cached summary reused" in notes and "context: cached summary extended" in notes
    # Another conversation shares nothing.
    other = ChainContext(agent=config, conversation_id="conv-2")
    ContextEditingInterceptor().intercept(history, other)
    assert "context: cached summary reused" not in other.notes


def test_the_playground_says_when_a_cached_summary_was_used(login, support_user, summarizer):
    for i in range(30):
        ChatMessage.objects.create(conversation_id="pg", agent_id="chat", user_id="1",
                                   role="USER" if i % 2 == 0 else "ASSISTANT", content=f"message {i}")
    client = login(support_user)
    query = {"conversation": "pg", "c-summarize-threshold": "10", "c-summarize-keep_last": "4"}
    first = client.get(reverse("playground-context", args=["summarize"]), query).content.decode()
    assert "cached summary reused" not in first
    ChatMessage.objects.create(conversation_id="pg", agent_id="chat", user_id="1", role="USER", content="one more")
    second = client.get(reverse("playground-context", args=["summarize"]), query).content.decode()
    assert "cached summary reused: no LLM call" in second
    assert 'data-llm-calls="0"' in second
