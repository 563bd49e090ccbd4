"""The warm search is exact: the same ids and scores as a cold one after every kind of change, and the
receipts' candidates read in bulk are the same numbers as one by one (issue 13, search speed)."""

from __future__ import annotations

import pytest

from memoryboard.ltm.retrieval import Outcome, memory_rank
from memoryboard.ltm.selectors import memory_queryset_for
from memoryboard.ltm.services import memory_archive, memory_set_paused, memory_update
from memoryboard.ltm.vector_cache import scope_cache

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

    from memoryboard.ltm.embeddings import _embedder
    from memoryboard.ltm.vector_cache import ITEM_OVERHEAD, VECTOR_DTYPE

    contents = [f"User note {i} about Java, tea and the garden" for i in range(12)]
    for content in contents:
        make_memory(alice, content)
    _search(alice)
    (data,) = scope_cache._items.values()
    dim = int(_embedder().dim)
    assert data.matrix.dtype == VECTOR_DTYPE and data.nbytes == len(contents) * (dim * 2 + 4 + 8 + 4 + ITEM_OVERHEAD)
    exact = np.asarray(_embedder().embed(sorted(contents)), dtype=np.float32)
    query = exact[3]
    got, want = np.sort(data.cosines(query)), np.sort(exact @ query)
    assert np.allclose(got, want, atol=1e-4), (got, want)


def test_a_scope_fits_the_budget_in_compact_vectors_where_float32_did_not(alice, make_memory, settings):
    from memoryboard.ltm.embeddings import _embedder
    from memoryboard.ltm.vector_cache import ITEM_OVERHEAD

    items = 10
    for i in range(items):
        make_memory(alice, f"User note {i} about Java")
    float32_bytes = items * (int(_embedder().dim) * 4 + 600)  # what a scope was counted before
    settings.MEMORYBOARD_VECTOR_CACHE_MB = (float32_bytes - 1) / 1024 / 1024
    assert items * (int(_embedder().dim) * 2 + 4 + 8 + ITEM_OVERHEAD) < float32_bytes - 1
    first, _ = _search(alice)
    assert len(scope_cache) == 1  # kept: the next search does not rebuild it
    assert _search(alice)[0] == first
