"""The per-process vector cache: vectors found by checksum, never stale, bounded, read in one query."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memoryboard.ltm.embeddings import memory_embed_many
from memoryboard.ltm.retrieval import memory_search
from memoryboard.ltm.selectors import memory_queryset_for
from memoryboard.ltm.services import memory_update
from memoryboard.ltm.vector_cache import VectorCache, get_vector_cache
from memoryboard.models import MemoryEmbedding, vector_checksum

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    get_vector_cache().clear()
    yield
    get_vector_cache().clear()


def _vector_reads(ctx) -> int:
    return sum("SELECT id, vector FROM" in q["sql"] for q in ctx.captured_queries)


def test_the_oldest_vector_goes_first_once_the_bound_is_reached():
    cache = VectorCache(max_bytes=3 * 4)
    cache.put_many([(1, b"aaaa"), (2, b"bbbb"), (3, b"cccc")])
    cache.put_many([(2, b"bbbb"), (4, b"dddd")])  # 2 is kept once; 1 is the oldest
    assert cache.get_many([1, 2, 3, 4, None]) == [None, b"bbbb", b"cccc", b"dddd", None]
    assert len(cache) == 3


def test_stored_checksums_name_the_vector_bytes(alice, make_memory):
    memory = make_memory(alice, "User is a Java developer")
    row = MemoryEmbedding.objects.get(memory_id=memory.pk)
    assert row.checksum == vector_checksum(bytes(row.vector))
    assert vector_checksum(b"x") != vector_checksum(b"y")


def test_a_second_search_reads_no_vector_and_ranks_the_same(alice, make_memory):
    for i in range(12):
        make_memory(alice, f"User note {i}: likes tea, Java and hiking")
    make_memory(alice, "User is a Java developer")
    scope = memory_queryset_for(alice)
    with CaptureQueriesContext(connection) as cold:
        first = memory_search(queryset=scope, query="Java developer", k=5)
    with CaptureQueriesContext(connection) as warm:
        second = memory_search(queryset=scope, query="Java developer", k=5)
    assert _vector_reads(cold) == 1 and _vector_reads(warm) == 0
    assert [(i.memory.pk, i.score) for i in first] == [(i.memory.pk, i.score) for i in second]


def test_an_edited_item_is_ranked_by_its_new_content(alice, make_memory):
    memory = make_memory(alice, "User is a Java developer")
    make_memory(alice, "User drinks green tea")
    scope = memory_queryset_for(alice)
    assert memory_search(queryset=scope, query="Java developer", k=1)[0].memory.pk == memory.pk  # cached now

    memory_update(memory=memory, actor=None, content="User enjoys mountain hiking")
    found = memory_search(queryset=scope, query="mountain hiking", k=1)
    assert found[0].memory.pk == memory.pk and found[0].score > 0.5
    assert memory_search(queryset=scope, query="Java developer", k=2)[0].memory.pk != memory.pk


def test_bytes_that_do_not_match_their_checksum_are_used_but_not_kept(alice, make_memory):
    memory = make_memory(alice, "User is a Java developer")
    row = MemoryEmbedding.objects.get(memory_id=memory.pk)
    other = np.zeros(len(row.vector) // 4, dtype=np.float32)
    other[0] = 1.0
    MemoryEmbedding.objects.filter(pk=row.pk).update(vector=other.tobytes())  # a write that skipped the checksum
    memory_search(queryset=memory_queryset_for(alice), query="Java", k=1)
    assert len(get_vector_cache()) == 0


def test_without_a_cache_every_search_reads_the_vectors(settings, alice, make_memory):
    settings.MEMORYBOARD_VECTOR_CACHE_MB = 0
    best = make_memory(alice, "User is a Java developer")
    make_memory(alice, "User drinks green tea")
    for _ in range(2):
        with CaptureQueriesContext(connection) as ctx:
            assert memory_search(queryset=memory_queryset_for(alice), query="Java", k=1)[0].memory.pk == best.pk
        assert _vector_reads(ctx) == 1


def test_re_embedding_writes_the_checksum_of_the_new_vector(alice, make_memory):
    memory = make_memory(alice, "User is a Java developer")
    before = MemoryEmbedding.objects.get(memory_id=memory.pk).checksum
    memory.value_json = {**memory.value_json, "content": "User drinks green tea"}
    memory_embed_many([memory])
    row = MemoryEmbedding.objects.get(memory_id=memory.pk)
    assert row.checksum != before and row.checksum == vector_checksum(bytes(row.vector))


def test_the_migration_fills_checksums_of_existing_vectors(alice, make_memory):
    import importlib
    from types import SimpleNamespace

    from django.apps import apps

    make_memory(alice, "User is a Java developer")
    make_memory(alice, "User drinks green tea")
    MemoryEmbedding.objects.update(checksum=0)
    migration = importlib.import_module("memoryboard.migrations.0003_embedding_checksum")
    migration.fill_checksums(apps, SimpleNamespace(connection=connection))  # only its connection is used
    assert all(c == vector_checksum(bytes(v)) for v, c in MemoryEmbedding.objects.values_list("vector", "checksum"))


# --- a user's item-to-vector map, kept while their vector generation is unchanged -------------------

def _own(user, query, k=3):
    from memoryboard.ltm.retrieval import memory_search_own

    return memory_search_own(user_id=str(user.pk), query=query, k=k)


def _joins(ctx) -> int:
    return sum("JOIN memoryboard_embedding" in q["sql"] for q in ctx.captured_queries)


def test_every_write_of_a_users_vectors_raises_their_generation(alice, bob, make_memory):
    from memoryboard.models import VectorGeneration

    def generation(user):
        return VectorGeneration.objects.filter(user_id=str(user.pk)).values_list("generation", flat=True).first() or 0

    memory = make_memory(alice, "User is a Java developer")
    first = generation(alice)
    assert first > 0 and generation(bob) == 0
    memory_update(memory=memory, actor=None, content="User drinks green tea")
    assert generation(alice) > first and generation(bob) == 0


@pytest.mark.django_db(transaction=True)
def test_a_known_scope_is_searched_without_the_vector_join(alice, make_memory):
    best = make_memory(alice, "User is a Java developer")
    make_memory(alice, "User drinks green tea")
    with CaptureQueriesContext(connection) as cold:
        assert _own(alice, "Java developer")[0].memory.pk == best.pk
    with CaptureQueriesContext(connection) as warm:
        found = _own(alice, "Java developer")
    assert _joins(cold) == 1 and _joins(warm) == 0 and _vector_reads(warm) == 0
    assert found[0].memory.pk == best.pk


@pytest.mark.django_db(transaction=True)
def test_a_changed_generation_reads_the_vectors_again(alice, make_memory):
    java = make_memory(alice, "User is a Java developer")
    make_memory(alice, "User drinks green tea")
    assert _own(alice, "Java developer")[0].memory.pk == java.pk  # the map is known now

    memory_update(memory=java, actor=None, content="User enjoys mountain hiking")
    hiking = make_memory(alice, "User climbed a mountain last summer")
    with CaptureQueriesContext(connection) as ctx:
        found = _own(alice, "mountain hiking", k=2)
    assert _joins(ctx) == 1  # the generation moved: the map is taken again
    assert {f.memory.pk for f in found} == {java.pk, hiking.pk}


@pytest.mark.django_db(transaction=True)
def test_new_items_archived_items_and_other_users_follow_the_table(alice, bob, make_memory):
    from memoryboard.ltm.services import memory_archive

    old = make_memory(alice, "User is a Java developer")
    _own(alice, "Java")  # the map is known
    memory_archive(memory=old, actor=None)
    make_memory(bob, "Bob is a Java developer")
    assert _own(alice, "Java") == []
    assert [f.memory.content for f in _own(bob, "Java")] == ["Bob is a Java developer"]


@pytest.mark.django_db(transaction=True)
def test_the_same_candidates_reuse_their_matrix_and_a_change_rebuilds_it(alice, make_memory):
    from memoryboard.llm.factory import get_embedder
    from memoryboard.ltm.services import memory_archive
    from memoryboard.ltm.vector_cache import scope_vectors

    items = [make_memory(alice, f"User note {i} about Java") for i in range(4)]
    key = (str(alice.pk), get_embedder().name)
    first = _own(alice, "Java", k=4)
    ids, matrix = scope_vectors._scopes[key].ranked
    assert sorted(ids) == sorted(m.pk for m in items) and not matrix.flags.writeable
    assert [(f.memory.pk, f.score) for f in _own(alice, "Java", k=4)] == [(f.memory.pk, f.score) for f in first]
    assert scope_vectors._scopes[key].ranked[1] is matrix  # reused, not rebuilt

    memory_archive(memory=items[0], actor=None)
    assert items[0].pk not in {f.memory.pk for f in _own(alice, "Java", k=4)}
    assert items[0].pk not in scope_vectors._scopes[key].ranked[0]


def test_scopes_beyond_the_bound_go_least_recently_used_first():
    from memoryboard.ltm.vector_cache import Scope, ScopeVectors

    scopes = ScopeVectors(max_items=4)
    scopes.put(("1", "m"), Scope(generation=1, vectors={"a": ("a", 1, 1), "b": ("b", 2, 2)}))
    scopes.put(("2", "m"), Scope(generation=1, vectors={"c": ("c", 3, 3)}))
    assert scopes.get(("1", "m"), 1) is not None and scopes.get(("1", "m"), 2) is None  # 1 used last
    scopes.put(("3", "m"), Scope(generation=1, vectors={"d": ("d", 4, 4), "e": ("e", 5, 5)}))
    assert not scopes.known(("2", "m")) and scopes.known(("1", "m")) and scopes.known(("3", "m"))
