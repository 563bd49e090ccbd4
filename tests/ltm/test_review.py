"""Review: pending items per the agent's memory-review, approve/reject, and conflict pairs resolved three ways."""

from __future__ import annotations

import pytest

from memoryboard.agents_config import reset_agents_config
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.search.retrieval import memory_retrieve
from memoryboard.ltm.write.review import (
    conflict_pairs,
    memory_conflict_resolve,
    memory_review_approve,
    memory_review_reject,
    pending_review,
)
from memoryboard.ltm.store.items import MemoryError
from memoryboard.ltm.write.items import memory_create
from memoryboard.ltm.store.states import memory_state
from memoryboard.ltm.write.tools import run_memory_tool
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory, MemoryStateChange

pytestmark = pytest.mark.django_db

AGENTS = """
agent:
  agents:
    chat: {memory-tools: true, long-term-memory: {enabled: true, namespace: chat, memory-review: all}}
    careful: {memory-tools: true, long-term-memory: {enabled: true, namespace: careful, memory-review: low_confidence}}
    free: {memory-tools: true, long-term-memory: {enabled: true, namespace: free}}
"""


@pytest.fixture(autouse=True)
def agents(settings, tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS)
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield
    reset_agents_config()


def _ns(user, agent="chat"):
    return build_namespace(agent_namespace=agent, user_id=str(user.pk))


def _create(user, content, *, agent="chat", source="agent_tool", **extra):
    return memory_create(namespace=_ns(user, agent), content=content, memory_type="FACT", agent_id=agent,
                         source=source, **extra)


def _search(user, query, agent="chat"):
    return [i.memory.content for i in memory_retrieve(namespace=_ns(user, agent), query=query, k=5, agent_id=agent)]


def test_memory_review_all_keeps_agent_items_waiting_and_unused(alice):
    result = run_memory_tool(name="memory_save", namespace=_ns(alice), agent_id="chat",
                             arguments={"content": "User lives in Berlin", "type": "FACT"})
    assert result["saved"] and result["pending_review"] is True
    item = LongTermMemory.objects.get(pk=result["id"])
    assert item.archived and item.archived_reason == ArchivedReason.PENDING_REVIEW
    assert memory_state(item) == "pending_review"
    assert _search(alice, "Where does the user live?") == []
    manual = _create(alice, "User likes tea", source="manual")  # written by a person: never waits
    assert not manual.archived


def test_low_confidence_waits_only_when_the_writer_is_unsure(alice):
    sure = _create(alice, "User lives in Berlin", agent="careful")
    unsure = _create(alice, "User may live in Munich", agent="careful", low_confidence=True)
    free = _create(alice, "User lives in Paris", agent="free", low_confidence=True)
    assert (sure.archived, unsure.archived, free.archived) == (False, True, False)


def test_approve_makes_it_used_and_reject_keeps_it_unused(alice, support_user):
    a = _create(alice, "User lives in Berlin")
    b = _create(alice, "User owns a red bicycle")
    assert set(pending_review(LongTermMemory.objects.all()).values_list("pk", flat=True)) == {a.pk, b.pk}
    assert memory_review_approve(memories=[a], actor=alice) == [a.pk]
    assert memory_review_reject(memories=[b], actor=support_user) == [b.pk]
    a.refresh_from_db(), b.refresh_from_db()
    assert not a.archived and memory_state(a) == "active"
    assert b.archived_reason == ArchivedReason.REJECTED and memory_state(b) == "rejected"
    assert _search(alice, "Where does the user live?") == ["User lives in Berlin"]
    assert MemoryStateChange.objects.get(memory_id=a.pk).new_state == "active"
    assert MemoryStateChange.objects.get(memory_id=b.pk).new_state == "rejected"
    assert AuditLog.objects.filter(object_id=b.pk, reason="rejected in review", actor=support_user).exists()
    # Done twice: nothing more happens (an approved item is not "rejected" by a late click).
    assert memory_review_reject(memories=[a], actor=alice) == []


def test_bulk_approve(alice):
    facts = ("User lives in Porto", "User is allergic to peanuts", "User plays the cello", "User has a dog called Rex")
    items = [_create(alice, fact) for fact in facts]
    assert sorted(memory_review_approve(memories=items, actor=alice)) == sorted(m.pk for m in items)
    assert not LongTermMemory.objects.filter(archived=True).exists()


def _conflict(user):
    old = _create(user, "User lives in Shanghai", agent="free")
    new = _create(user, "User lives in Berlin", agent="free")
    LongTermMemory.objects.filter(pk=old.pk).update(value_json={**old.value_json, "conflictWith": [new.pk]})
    LongTermMemory.objects.filter(pk=new.pk).update(value_json={**new.value_json, "conflictWith": [old.pk]})
    return LongTermMemory.objects.get(pk=new.pk), LongTermMemory.objects.get(pk=old.pk)


def test_conflict_pairs_are_listed_once_newer_first(alice, bob):
    new, old = _conflict(alice)
    _conflict(bob)
    pairs = conflict_pairs(LongTermMemory.objects.filter(namespace=_ns(alice, "free").as_text()))
    assert [(p.new.pk, p.old.pk) for p in pairs] == [(new.pk, old.pk)]


def test_keep_the_new_supersedes_the_old(alice):
    new, old = _conflict(alice)
    memory_conflict_resolve(new=new, old=old, keep="new", actor=alice)
    new.refresh_from_db(), old.refresh_from_db()
    assert old.archived_reason == ArchivedReason.SUPERSEDED and memory_state(old) == "superseded"
    assert old.superseded_by == new.pk and old.valid_to is not None
    assert not new.archived and new.conflict_with == [] and old.conflict_with == []
    assert _search(alice, "Where does the user live?", agent="free") == ["User lives in Berlin"]
    assert AuditLog.objects.filter(object_id=old.pk, reason="conflict: kept the newer").exists()


def test_keep_the_old_rejects_the_new(alice):
    new, old = _conflict(alice)
    memory_conflict_resolve(new=new, old=old, keep="old", actor=alice)
    new.refresh_from_db(), old.refresh_from_db()
    assert new.archived_reason == ArchivedReason.REJECTED and not old.archived
    assert "conflictWith" not in old.value_json and "conflictWith" not in new.value_json


def test_keep_both_clears_the_marks(alice):
    new, old = _conflict(alice)
    memory_conflict_resolve(new=new, old=old, keep="both", actor=alice)
    new.refresh_from_db(), old.refresh_from_db()
    assert not new.archived and not old.archived
    assert conflict_pairs(LongTermMemory.objects.all()) == []
    assert AuditLog.objects.filter(reason="conflict: kept both").count() == 2


def test_resolving_something_that_is_not_a_pair_changes_nothing(alice):
    a = _create(alice, "User lives in Shanghai", agent="free")
    b = _create(alice, "User lives in Berlin", agent="free")
    with pytest.raises(MemoryError) as exc:
        memory_conflict_resolve(new=b, old=a, keep="new", actor=alice)
    assert exc.value.field == "pair"
    new, old = _conflict(alice)
    with pytest.raises(MemoryError) as exc:
        memory_conflict_resolve(new=new, old=old, keep="neither", actor=alice)
    assert exc.value.field == "keep"
    assert not LongTermMemory.objects.filter(archived=True).exists()


def test_extracted_items_of_a_reviewed_agent_wait_too(openai_settings, alice):
    import json

    from memoryboard.ltm.write.extraction import memory_extract_and_save

    openai_settings.push_reply(content=json.dumps([{"type": "FACT", "content": "User is a data engineer"}]))
    saved = memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1",
                                    conversation=[{"role": "user", "content": "I'm a data engineer at a bank."}])
    assert [m.archived_reason for m in saved] == [ArchivedReason.PENDING_REVIEW]
    assert LongTermMemory.objects.get(pk=saved[0].pk).archived
