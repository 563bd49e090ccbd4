"""Retrieval: ranking, access statistics, pause and the user's switch, the injected block."""

from __future__ import annotations

import pytest

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.search.results import ScoredMemory
from memoryboard.ltm.search.retrieval import format_memory_block, memory_retrieve, memory_search
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.models import LongTermMemory, MemoryAccess, MemoryEmbedding, MemoryFlag, PauseRule, UserMemorySettings

pytestmark = pytest.mark.django_db


def ns(user, agent="chat"):
    return build_namespace(agent_namespace=agent, user_id=str(user.pk))


def test_retrieve_ranks_the_relevant_item_first_and_counts_the_access(alice, make_memory):
    java = make_memory(alice, "用户是Java后端开发者")
    make_memory(alice, "User likes hiking in the mountains", memory_type="PREFERENCE")
    make_memory(alice, "User has a cat named Tom", memory_type="FACT")

    items = memory_retrieve(namespace=ns(alice), query="我是一名Java开发者", k=2, agent_id="chat", conversation_id="c1")

    assert [i.memory.pk for i in items] == [java.pk]  # the unrelated items are below the minimum relevance
    java.refresh_from_db()
    assert java.access_count == 1 and java.last_accessed_at is not None
    logged = list(MemoryAccess.objects.values_list("memory_id", "kind", "conversation_id"))
    assert logged == [(java.pk, "retrieval", "c1")]


def test_retrieve_only_reads_the_namespace(alice, bob, make_memory):
    make_memory(bob, "User is a Java developer")
    make_memory(alice, "User is a Java developer", agent="coder")
    assert memory_retrieve(namespace=ns(alice), query="Java developer") == []


def test_archived_and_paused_items_are_not_retrieved(alice, make_memory):
    archived = make_memory(alice, "User is a Java developer", archived_reason="staff")
    paused = make_memory(alice, "User writes Java at work")
    pref = make_memory(alice, "User prefers Java code examples", memory_type="PREFERENCE")
    kept = make_memory(alice, "User learns Java on weekends", memory_type="EPISODE")
    MemoryFlag.objects.create(memory_id=paused.pk, paused=True)
    PauseRule.objects.create(user_id=str(alice.pk), agent_namespace="chat", memory_type="PREFERENCE")

    ids = {i.memory.pk for i in memory_retrieve(namespace=ns(alice), query="Java")}
    assert ids == {kept.pk}
    assert archived.pk not in ids and pref.pk not in ids

    found = {i.memory.pk for i in memory_search(queryset=memory_queryset_for(alice), query="Java")}
    assert found == {kept.pk}


def test_a_pause_rule_for_the_whole_agent_pauses_everything(alice, make_memory):
    make_memory(alice, "User is a Java developer")
    PauseRule.objects.create(user_id=str(alice.pk), agent_namespace="chat", memory_type="")
    assert memory_retrieve(namespace=ns(alice), query="Java") == []
    make_memory(alice, "User is a Java developer", agent="coder")
    assert len(memory_retrieve(namespace=ns(alice, "coder"), query="Java")) == 1


def test_use_memories_switch_off_returns_nothing(alice, make_memory):
    make_memory(alice, "User is a Java developer")
    UserMemorySettings.objects.create(user_id=str(alice.pk), use_memories=False)
    assert memory_retrieve(namespace=ns(alice), query="Java") == []
    assert MemoryAccess.objects.count() == 0


def test_missing_vectors_are_embedded_on_the_fly(alice, make_memory):
    memory = make_memory(alice, "User is a Java developer")
    MemoryEmbedding.objects.all().delete()
    items = memory_search(queryset=memory_queryset_for(alice), query="Java developer")
    assert [i.memory.pk for i in items] == [memory.pk]
    assert MemoryEmbedding.objects.filter(memory_id=memory.pk).count() == 1
    assert items[0].relevance > 0.5


def test_search_does_not_count_accesses_and_blank_query_is_empty(alice, make_memory):
    memory = make_memory(alice, "User is a Java developer")
    assert memory_search(queryset=memory_queryset_for(alice), query="   ") == []
    memory_search(queryset=memory_queryset_for(alice), query="Java")
    memory.refresh_from_db()
    assert memory.access_count == 0


def test_search_respects_the_callers_scope(alice, bob, make_memory):
    make_memory(bob, "Bob is a Java developer")
    assert memory_search(queryset=memory_queryset_for(alice), query="Java developer") == []


def test_unknown_access_kind_is_refused(alice):
    with pytest.raises(ValueError):
        memory_retrieve(namespace=ns(alice), query="x", kind="spy")


def test_memory_block_format():
    def item(content, kind, relevance):  # the block says how related each item is, not its rank score
        return ScoredMemory(memory=LongTermMemory(id=content, namespace="", key_name="", value_json={"content": content, "type": kind}), score=3.0, related=relevance)

    block = format_memory_block([item("用户是Java后端开发者", "FACT", 0.9234), item("偏好代码示例", "PREFERENCE", 0.875)])
    assert block == (
        "<long_term_memory>\n"
        "以下是你对该用户的长期记忆：\n"
        "1. [FACT] 用户是Java后端开发者 (相关度: 0.92)\n"
        "2. [PREFERENCE] 偏好代码示例 (相关度: 0.88)\n"
        "</long_term_memory>"
    )
    assert format_memory_block([]) == ""


@pytest.mark.django_db(transaction=True)
def test_access_statistics_are_written_by_the_background_writer(settings, alice, make_memory):
    from memoryboard.ltm.search.access_log import flush_access_log

    settings.MEMORYBOARD_TASKS_INLINE = False
    memory = make_memory(alice, "User is a Java developer")
    items = memory_retrieve(namespace=ns(alice), query="Java", agent_id="chat", conversation_id="bg")
    assert items[0].memory.access_count == 1  # the returned item is updated at once
    assert flush_access_log(timeout=10)
    memory.refresh_from_db()
    assert memory.access_count == 1 and memory.last_accessed_at is not None
    assert MemoryAccess.objects.filter(memory_id=memory.pk, conversation_id="bg").count() == 1


def test_search_caps_on_the_fly_embedding(monkeypatch, alice, make_memory):
    from memoryboard.ltm.search import retrieval

    monkeypatch.setattr(retrieval, "MAX_EMBED_ON_THE_FLY", 2)
    items = [make_memory(alice, f"User note number {i} about Java") for i in range(8)]
    best = make_memory(alice, "Java Java Java developer")
    found = memory_search(queryset=memory_queryset_for(alice), query="Java developer", k=3)
    assert found[0].memory.pk == best.pk and len(found) == 3
    assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)

    MemoryEmbedding.objects.filter(memory_id__in=[m.pk for m in items]).delete()
    from memoryboard.ltm.search.vector_cache import scope_cache

    scope_cache.clear()  # a process that has not seen these items (the items themselves did not change)
    found = memory_search(queryset=memory_queryset_for(alice), query="Java developer", k=20)
    assert len(found) == 1 + 2  # the item with a vector, and two embedded on the fly
    assert MemoryEmbedding.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_background_writer_writes_retrievals_that_arrive_together_in_one_batch(monkeypatch, settings, alice,
                                                                                make_memory):
    from memoryboard.ltm.search import access_log

    settings.MEMORYBOARD_TASKS_INLINE = False
    monkeypatch.setattr(access_log, "LINGER", 1.0)  # wide enough for two retrievals on a busy machine
    batches = []
    write = access_log.write_access_records
    monkeypatch.setattr(access_log, "write_access_records", lambda records: (batches.append(len(records)),
                                                                               write(records)))
    memory = make_memory(alice, "User is a Java developer")
    access_log.flush_access_log(timeout=10)  # the writer is idle
    batches.clear()
    for conversation in ("first", "second"):
        memory_retrieve(namespace=ns(alice), query="Java", agent_id="chat", conversation_id=conversation)
    assert access_log.flush_access_log(timeout=10)  # a flush ends the wait for more
    assert batches == [2]
    memory.refresh_from_db()
    assert memory.access_count == 2
    assert set(MemoryAccess.objects.filter(memory_id=memory.pk).values_list("conversation_id", flat=True)) == {
        "first", "second"}
