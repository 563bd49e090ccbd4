"""An erase empties every process's memory of what users said, not only the erasing process's.

Another process is modelled by this one: its caches hold alice's words and her scopes; an erase elsewhere
shows only as the tombstone it stamps (``ltm.store.erase_gate``), which the follower reads.
"""

from __future__ import annotations

import time

import pytest
from django.db import transaction
from django.utils import timezone

from memoryboard.llm.embeddings import UniversalSentenceEncoder
from memoryboard.ltm.people import process_texts
from memoryboard.ltm.people.user_data import user_data_erase
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.search.vector_cache import scope_cache
from memoryboard.ltm.store.erase_gate import erase_gate_close
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.ltm.write import reconcile_offline, reconcile_scope
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models.namespaces import build_namespace

SAID = ("I keep bees on the allotment in Hebden Bridge.", "My bees swarmed twice this spring.")


@pytest.fixture(autouse=True)
def _fresh_follower(monkeypatch):
    monkeypatch.setattr(process_texts, "_seen", {"erases": None})
    monkeypatch.setattr(process_texts._follower, "thread", None)


def _warm(user) -> None:
    """Alice saves two statements and searches: this process now keeps her words and her scopes."""
    for said in SAID:
        memory_save_reconciled(namespace=build_namespace(agent_namespace="chat", user_id=str(user.pk)),
                               content=said, memory_type="FACT", agent_id="chat", source="manual")
    memory_rank(queryset=memory_queryset_for(user), query="bees", k=5, user_id=str(user.pk), min_relevance=0)
    assert reconcile_offline._value_words.cache_info().currsize
    assert len(scope_cache)
    assert reconcile_scope._indexes


def _forgotten() -> bool:
    return (not reconcile_offline._value_words.cache_info().currsize and not reconcile_offline._parsed.cache_info().currsize
            and not len(scope_cache) and not reconcile_scope._indexes
            and not len(UniversalSentenceEncoder.recent._vectors))


@pytest.mark.django_db
def test_the_erasing_process_empties_its_own_at_once(alice, bob, use_embedder):
    _warm(alice)
    user_data_erase(user_id=str(bob.pk), actor=bob)
    assert _forgotten()


@pytest.mark.django_db
def test_an_erase_stamped_elsewhere_empties_this_process_at_the_followers_next_turn(alice, bob, use_embedder):
    assert process_texts.erase_follow_turn() is False  # the first turn notes where erases stand
    _warm(alice)
    assert process_texts.erase_follow_turn() is False  # nothing erased: the caches stay
    assert not _forgotten()
    with transaction.atomic():
        erase_gate_close(user_id=str(bob.pk), at=timezone.now())  # another process erases bob
    assert process_texts.erase_follow_turn() is True
    assert _forgotten()
    assert process_texts.erase_follow_turn() is False


@pytest.mark.django_db
def test_a_second_erase_of_the_same_user_is_seen_too(alice, bob, use_embedder):
    with transaction.atomic():
        erase_gate_close(user_id=str(bob.pk), at=timezone.now())
    process_texts.erase_follow_turn()
    _warm(alice)
    with transaction.atomic():
        erase_gate_close(user_id=str(bob.pk), at=timezone.now())  # one tombstone, a newer time
    assert process_texts.erase_follow_turn() is True
    assert _forgotten()


@pytest.mark.django_db(transaction=True)
def test_the_follower_thread_empties_the_caches_within_its_interval(alice, bob, settings, use_embedder):
    settings.MEMORYBOARD_ERASE_FOLLOW_SECONDS = 0.05
    process_texts.erase_follow_start()
    try:
        deadline = time.monotonic() + 5
        while process_texts._seen["erases"] is None and time.monotonic() < deadline:
            time.sleep(0.02)  # its first turn
        _warm(alice)
        with transaction.atomic():
            erase_gate_close(user_id=str(bob.pk), at=timezone.now())  # bob's erase, in another process
        while not _forgotten() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _forgotten()
    finally:
        settings.MEMORYBOARD_ERASE_FOLLOW_SECONDS = 0  # the thread stops at its next turn
        thread = process_texts._follower.thread
        thread.join(timeout=5)
        assert not thread.is_alive()
