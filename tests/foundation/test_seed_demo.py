from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from memoryboard.models import ChatMessage, LongTermMemory, MemoryEmbedding


@pytest.mark.django_db
def test_seed_demo_loads_every_role_conversation_and_memory_kind(capsys):
    call_command("seed_demo")
    out = capsys.readouterr().out
    User = get_user_model()
    assert User.objects.get(username="admin").is_superuser
    assert User.objects.get(username="support").groups.filter(name="support").exists()
    assert User.objects.get(username="developer").groups.filter(name="developers").exists()
    assert {"alice", "bob"} <= set(User.objects.values_list("username", flat=True))
    assert "alice" in out and "memoryboard-demo" in out

    assert set(ChatMessage.objects.values_list("agent_id", flat=True)) == {"chat", "coder"}
    longest = max(
        ChatMessage.objects.filter(conversation_id=c).count()
        for c in ChatMessage.objects.values_list("conversation_id", flat=True).distinct()
    )
    assert longest >= 300
    assert any(re.search("[\u4e00-\u9fff]", c) for c in ChatMessage.objects.values_list("content", flat=True))

    memories = list(LongTermMemory.objects.all())
    assert {m.memory_type for m in memories} == {"FACT", "PREFERENCE", "PROCEDURE", "EPISODE"}
    assert {m.source for m in memories} == {"auto_extract", "agent_tool"}
    assert any(m.archived for m in memories) and any(not m.archived for m in memories)
    assert MemoryEmbedding.objects.count() == len(memories)


@pytest.mark.django_db
def test_seed_demo_is_idempotent():
    call_command("seed_demo")
    counts = (LongTermMemory.objects.count(), ChatMessage.objects.count())
    call_command("seed_demo")
    assert (LongTermMemory.objects.count(), ChatMessage.objects.count()) == counts


@pytest.mark.django_db
def test_the_long_tool_using_conversation_is_acted_on_by_every_strategy():
    from memoryboard.conversations import conversation_messages
    from memoryboard.strategies import CONTEXT_STRATEGIES, apply_context

    call_command("seed_demo")
    rows = conversation_messages("demo-react-analyst")
    assert sum(1 for r in rows if r.role == "TOOL") >= 30
    for name in CONTEXT_STRATEGIES:
        result = apply_context(name, rows, None, keep_system=True)
        assert result.dropped or result.summarized or result.cleared, name
        out_ids = {m.id for m in result.messages if m.id is not None}
        called = {c.id for m in result.messages for c in m.tool_calls}
        answered = {rid for m in result.messages for rid in m.result_ids}
        assert called == answered, name  # whole units
        assert out_ids  # stored rows come back as themselves
