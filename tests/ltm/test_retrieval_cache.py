"""The warm search is exact: the same ids and scores as a cold one after every kind of change, and the
receipts' candidates read in bulk are the same numbers as one by one (issue 13, search speed)."""

from __future__ import annotations

import pytest

from memoryboard.ltm.search.results import Outcome
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.ltm.store.items import memory_archive, memory_set_paused
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.search.vector_cache import scope_cache

pytestmark = pytest.mark.django_db

QUERY = "Java developer"


def _search(user):
    found = memory_rank(queryset=memory_queryset_for(user), query=QUERY, k=5, user_id=str(user.pk))
    return [(c.memory_id, c.outcome, c.parts) for c in found.candidates], found


def _warm_equals_cold(user):
    warm, _ = _search(user)
    scope_cache.clear()
    cold, _ = _search(user)
    assert warm == cold
    return warm


def test_warm_results_follow_every_write(alice, support_user, make_memory):
    items = [make_memory(alice, f"User note {i} about Java and tea") for i in range(6)]
    first = _warm_equals_cold(alice)
    assert _search(alice)[0] == first and len(scope_cache) == 1  # warm: served from the cache

    added = make_memory(alice, "User is a Java backend developer")
    after_add = _warm_equals_cold(alice)
    assert after_add[0][0] == added.pk

    memory_update(memory=added, actor=support_user, content="User grows tomatoes in the garden")
    after_edit = _warm_equals_cold(alice)
    assert after_edit[0][0] != added.pk and after_edit != after_add

    memory_archive(memory=items[0], actor=support_user)
    after_archive = _warm_equals_cold(alice)
    assert items[0].pk not in {pk for pk, _outcome, _parts in after_archive}

    memory_set_paused(memory=items[1], actor=support_user, paused=True)
    after_pause = _warm_equals_cold(alice)
    assert dict((pk, outcome) for pk, outcome, _parts in after_pause)[items[1].pk] == Outcome.PAUSED


def test_candidates_read_in_bulk_are_the_per_item_numbers(alice, make_memory):
    for i in range(12):
        make_memory(alice, f"User note {i} about Java" if i % 2 else f"User likes hiking, trip {i}")
    _candidates, found = _search(alice)
    per_item = [found._scores.parts(i) for i in range(len(found._ids))]
    assert [c.parts for c in found.candidates] == per_item
    assert [c.parts for c in found.top_candidates(3)] == per_item[:3]
    assert found.summary() == {o: found._outcomes.count(o) for o in dict.fromkeys(found._outcomes)}
    assert sum(found.summary().values()) == 12


def test_a_scope_is_kept_in_16_bits_with_float32_cosines(alice, make_memory, settings):
    import numpy as np

    from memoryboard.ltm.search.embeddings import _embedder
    from memoryboard.ltm.search.vector_cache import ITEM_OVERHEAD, VECTOR_DTYPE

    contents = [f"User note {i} about Java, tea and the garden" for i in range(12)]
    for content in contents:
        make_memory(alice, content)
    _search(alice)
    (data,) = scope_cache._items.values()
    dim = int(_embedder().dim)
    per_item = dim * 2 + 4 + 8 + 4 + 4 + 4 + ITEM_OVERHEAD  # vector, scale, day, cosine with the mean, type weight, relevance
    assert data.matrix.dtype == VECTOR_DTYPE
    assert data.nbytes == len(contents) * per_item + data.total.nbytes + data.keywords.nbytes
    exact = np.asarray(_embedder().embed(sorted(contents)), dtype=np.float32)
    query = exact[3]
    got, want = np.sort(data.cosines(query)), np.sort(exact @ query)
    assert np.allclose(got, want, atol=1e-4), (got, want)


def test_a_scope_fits_the_budget_in_compact_vectors_where_float32_did_not(alice, make_memory, settings):
    from memoryboard.ltm.search.embeddings import _embedder
    from memoryboard.ltm.search.vector_cache import ITEM_OVERHEAD

    items = 10
    for i in range(items):
        make_memory(alice, f"User note {i} about Java")
    float32_bytes = items * (int(_embedder().dim) * 4 + 600)  # what a scope was counted before
    settings.MEMORYBOARD_VECTOR_CACHE_MB = (float32_bytes - 1) / 1024 / 1024
    assert items * (int(_embedder().dim) * 2 + 4 + 8 + 4 + 4 + ITEM_OVERHEAD) + 8 * int(_embedder().dim) + 4096 \
        < float32_bytes - 1
    first, _ = _search(alice)
    assert len(scope_cache) == 1  # kept: the next search does not rebuild it
    assert _search(alice)[0] == first


def test_a_host_sees_at_once_what_another_host_or_the_platform_wrote(alice, support_user, make_memory, monkeypatch):
    """Each gunicorn worker (each host) keeps its own scope cache and nobody tells it of a write: a warm
    search on host A must still follow every write made on host B or straight into the shared table by
    the agent platform (no ``updated_at`` bump, no memoryboard code), and match a cold search."""
    from datetime import timedelta

    from django.utils import timezone

    from memoryboard.ltm.search import retrieval
    from memoryboard.ltm.search.vector_cache import ScopeCache
    from memoryboard.models import LongTermMemory, MemoryFlag, PauseRule

    host_a, host_b = ScopeCache(), ScopeCache()

    def search_on(host, **options):
        monkeypatch.setattr(retrieval, "scope_cache", host)
        found = memory_rank(queryset=memory_queryset_for(alice), query=QUERY, k=5, user_id=str(alice.pk), **options)
        return {c.memory_id: c.outcome for c in found.candidates}, {item.memory.pk: item.score for item in found.results}

    def on_a_as_cold(**options):
        warm = search_on(host_a, **options)
        assert len(host_a) >= 1  # host A searches from its cache
        assert warm == search_on(ScopeCache(), **options)
        return warm

    items = [make_memory(alice, f"User note {i} about Java and tea", memory_type="EPISODE") for i in range(4)]
    fact = make_memory(alice, "User is a Java backend developer")
    outcomes, results = on_a_as_cold()
    assert max(results, key=results.get) == fact.pk

    search_on(host_b)  # host B has its own cache, then writes
    added = make_memory(alice, "User writes Java for a living, a Java developer")
    outcomes, results = on_a_as_cold()
    assert added.pk in outcomes and added.pk in results

    # The platform archives an item with a plain UPDATE (updated_at untouched).
    LongTermMemory.objects.filter(pk=fact.pk).update(archived=True, archived_reason="decay")
    outcomes, results = on_a_as_cold()
    assert fact.pk not in outcomes

    # The platform decays a relevance score (bulk_update, updated_at untouched): the new score is used.
    _outcomes, before = on_a_as_cold()
    LongTermMemory.objects.filter(pk=added.pk).update(relevance_score=0.0)
    _outcomes, after = on_a_as_cold()
    assert after[added.pk] < before[added.pk]

    # A pause flag written on host B, then a pause rule: paused on host A at once.
    MemoryFlag.objects.create(memory_id=items[0].pk, paused=True)
    outcomes, results = on_a_as_cold()
    assert outcomes[items[0].pk] == Outcome.PAUSED and items[0].pk not in results
    PauseRule.objects.create(user_id=str(alice.pk), memory_type="FACT")
    outcomes, results = on_a_as_cold()
    assert outcomes[added.pk] == Outcome.PAUSED and added.pk not in results

    # An item whose expiry passes while host A's cache holds it: expired from that moment on.
    expires = (timezone.now() + timedelta(hours=1)).isoformat()
    target = items[1]
    LongTermMemory.objects.filter(pk=target.pk).update(value_json={**target.value_json, "expiresAt": expires})
    outcomes, results = on_a_as_cold()
    assert target.pk in results
    later = timezone.now() + timedelta(hours=2)
    outcomes, results = on_a_as_cold(now=later)
    assert outcomes[target.pk] == Outcome.EXPIRED and target.pk not in results
