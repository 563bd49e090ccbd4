"""Search's candidate scan: one joined query (vectors and pause flags), paging for large scopes."""

from __future__ import annotations

import pytest

from memoryboard.ltm import retrieval
from memoryboard.ltm.retrieval import memory_search
from memoryboard.ltm.selectors import memory_queryset_for
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


@pytest.mark.parametrize("chunk_rows", [20_000, 3, 1])
def test_scan_keeps_only_active_own_items_in_one_page_or_many(monkeypatch, alice, mixed, chunk_rows):
    monkeypatch.setattr(retrieval, "CHUNK_ROWS", chunk_rows)
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
