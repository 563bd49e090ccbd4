"""Search's candidates: one query (state, pause flags and rules, vector checksums), exact or for large
scopes through the HNSW index (here: none built, so the exact fallback)."""

from __future__ import annotations

import pytest

from memoryboard.ltm.search import retrieval
from memoryboard.ltm.search.retrieval import memory_search
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.models import LongTermMemory, MemoryFlag, PauseRule

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed(alice, bob, make_memory):
    """Alice's items in every state, and Bob's: only ``kept`` may be found for Alice."""
    kept = [make_memory(alice, f"User learns Java, note {i}") for i in range(5)]
    flagged = make_memory(alice, "User writes Java at work")
    MemoryFlag.objects.create(memory_id=flagged.pk, paused=True)
    resumed = make_memory(alice, "User reads Java books")
    MemoryFlag.objects.create(memory_id=resumed.pk, paused=False)  # a flag row that pauses nothing
    make_memory(alice, "User is a Java developer", archived_reason="staff")
    make_memory(alice, "User prefers Java examples", memory_type="PREFERENCE")
    PauseRule.objects.create(user_id=str(alice.pk), agent_namespace="", memory_type="PREFERENCE")
    bobs = make_memory(bob, "User learns Java too")
    return {m.pk for m in kept} | {resumed.pk}, bobs


@pytest.mark.parametrize("exact_max", [20_000, 3, 1])
def test_scan_keeps_only_active_own_items_exact_or_large(monkeypatch, alice, mixed, exact_max):
    monkeypatch.setattr(retrieval, "EXACT_MAX", exact_max)
    expected, bobs = mixed
    for user_id in (None, str(alice.pk)):
        found = memory_search(queryset=memory_queryset_for(alice), query="Java", k=100, user_id=user_id)
        assert {f.memory.pk for f in found} == expected
        assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)


def test_staff_scope_applies_every_users_pause_rules(support_user, alice, bob, mixed):
    expected, bobs = mixed
    PauseRule.objects.create(user_id=str(bob.pk), agent_namespace="chat", memory_type="")
    found = {f.memory.pk for f in memory_search(queryset=memory_queryset_for(support_user), query="Java", k=100)}
    assert found == expected  # Bob's item is paused by his rule, Alice's by hers


def test_scan_of_an_empty_queryset(alice, mixed):
    assert memory_search(queryset=LongTermMemory.objects.none(), query="Java") == []
    assert memory_search(queryset=memory_queryset_for(alice).filter(pk="nope"), query="Java") == []


@pytest.mark.parametrize("paused_count", [1, 3, 7])
def test_paused_best_items_give_way_to_the_next_ones(alice, make_memory, paused_count):
    """Paused items are ranked but never returned: the next ones take their place."""
    best = [make_memory(alice, "Java " * (20 - i) + f"developer {i}") for i in range(paused_count)]
    for memory in best:
        MemoryFlag.objects.create(memory_id=memory.pk, paused=True)
    rest = [make_memory(alice, f"User mentioned Java once, note {i}") for i in range(4)]
    make_memory(alice, "User drinks green tea")
    found = memory_search(queryset=memory_queryset_for(alice), query="Java developer", k=2, user_id=str(alice.pk))
    assert len(found) == 2
    assert {f.memory.pk for f in found} <= {m.pk for m in rest}


def test_an_end_users_rules_are_applied_when_counted(alice, make_memory):
    fact = make_memory(alice, "User is a Java developer")
    make_memory(alice, "User prefers Java examples", memory_type="PREFERENCE")
    PauseRule.objects.create(user_id=str(alice.pk), agent_namespace="", memory_type="PREFERENCE")
    found = memory_search(queryset=memory_queryset_for(alice), query="Java", k=10, user_id=str(alice.pk))
    assert [f.memory.pk for f in found] == [fact.pk]
