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
