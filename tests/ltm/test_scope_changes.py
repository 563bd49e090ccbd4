"""A scope changed in place is the scope a cold build makes (ltm.search.vector_cache, ltm.search.keywords).

Random sequences of writes, edits, type changes, archives, deletes, restores, pauses and erases, two users
and a staff scope over both: after every step, the search of a warm process (its scopes changed by the
rows that changed) gives the same candidates, outcomes and score parts, to the bit, as a process that
builds every scope cold; and a user's search never holds another user's item, nor an erased one.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryboard.ltm.search import keywords, ranking, retrieval
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.search.vector_cache import ScopeCache, keys_changed, version_keys
from memoryboard.ltm.store.items import memory_archive, memory_delete_for_user, memory_restore, memory_set_paused
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.ltm.write.edits import memory_update
from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db

WORDS = ["java", "tea", "garden", "berlin", "piano", "dog", "running", "shanghai", "咖啡", "北京", "跑步", "猫",
         "developer", "moved", "likes", "volunteers"]
TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=7).map(" ".join)
STEP = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(["alice", "bob"]), TEXT, st.sampled_from(["FACT", "EPISODE"])),
    st.tuples(st.just("edit"), st.integers(0, 99), TEXT),
    st.tuples(st.just("type"), st.integers(0, 99), st.sampled_from(["PREFERENCE", "PROCEDURE"])),
    st.tuples(st.just("archive"), st.integers(0, 99)),
    st.tuples(st.just("delete"), st.integers(0, 99)),
    st.tuples(st.just("restore"), st.integers(0, 99)),
    st.tuples(st.just("pause"), st.integers(0, 99)),
    st.tuples(st.just("purge"), st.integers(0, 99)),
    st.tuples(st.just("erase_bob")),
)


def _search(queryset, query, user_id):
    found = memory_rank(queryset=queryset, query=query, k=8, user_id=user_id, min_relevance=0.0)
    return [(c.memory_id, c.outcome, c.parts) for c in found.candidates]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=1, max_size=14), queries=st.lists(TEXT, min_size=1, max_size=2))
def test_a_scope_changed_in_place_equals_a_cold_build(alice, bob, superuser, make_memory, monkeypatch, steps,
                                                      queries):
    from memoryboard.ltm.people.user_data import user_data_erase

    LongTermMemory.objects.all().delete()
    monkeypatch.setattr(ranking, "CENTRALITY_MIN_ITEMS", 3)  # the scope's mean counts from small scopes on
    users = {"alice": alice, "bob": bob}
    warm = ScopeCache()
    erased: set[str] = set()
    created: list[LongTermMemory] = []
    for i in range(6):  # a scope to start from, searched once (kept warm)
        created.append(make_memory(alice if i % 2 else bob, " ".join(WORDS[i : i + 3])))

    def searches(cache):
        monkeypatch.setattr(retrieval, "scope_cache", cache)
        out = {}
        for query in queries:
            for name, user in users.items():
                out[(name, query)] = _search(memory_queryset_for(user), query, str(user.pk))
            out[("staff", query)] = _search(memory_queryset_for(superuser), query, None)
        return out

    searches(warm)
    for step in steps:
        kind, *args = step
        pick = created[args[0] % len(created)] if created and kind not in ("write", "erase_bob") else None
        if pick is not None:
            pick = LongTermMemory.objects.filter(pk=pick.pk).first()
        if kind == "write":
            created.append(make_memory(users[args[0]], args[1], memory_type=args[2]))
        elif pick is None:
            pass
        elif kind == "edit" and not pick.archived:
            memory_update(memory=pick, actor=superuser, content=args[1])
        elif kind == "type" and not pick.archived:
            memory_update(memory=pick, actor=superuser, memory_type=args[1])
        elif kind == "archive" and not pick.archived:
            memory_archive(memory=pick, actor=superuser)
        elif kind == "delete" and not pick.archived:
            memory_delete_for_user(memory=pick, actor=superuser)
        elif kind == "restore" and pick.archived:
            memory_restore(memory=pick, actor=superuser)
        elif kind == "pause":
            memory_set_paused(memory=pick, actor=superuser, paused=True)
        elif kind == "purge":
            pick.delete()
        if kind == "erase_bob":
            erased |= set(LongTermMemory.objects.filter(pk__in=[m.pk for m in created]).filter(
                namespace__contains=f'"user:{bob.pk}"').values_list("pk", flat=True))
            user_data_erase(user_id=str(bob.pk), actor=superuser)
        got, cold = searches(warm), searches(ScopeCache())
        assert got == cold, step
        mine = set(memory_queryset_for(alice).values_list("pk", flat=True))
        for query in queries:
            seen = {pk for pk, _outcome, _parts in got[("alice", query)]}
            assert seen <= mine  # never another user's item
            assert not seen & erased and not {pk for pk, _o, _p in got[("staff", query)]} & erased


def test_the_keyword_index_changed_in_place_scores_as_one_built_cold():
    rng = np.random.default_rng(5)
    words = ["java", "tea", "garden", "berlin", "咖啡", "北京", "volunteering", "volunteers", "the", "and"]

    def text():
        return " ".join(rng.choice(words, size=int(rng.integers(1, 9))))

    texts = [text() for _ in range(40)]
    index = keywords.KeywordIndex(texts)
    for _round in range(60):  # past several folds of the delta into the main postings
        gone = sorted(set(rng.integers(0, len(texts), size=int(rng.integers(0, 4))).tolist()))
        kept = [t for i, t in enumerate(texts) if i not in gone]
        new = [text() for _ in range(int(rng.integers(0, 4)))]
        at = sorted(rng.choice(len(kept) + len(new), size=len(new), replace=False).tolist())
        result, it_kept, it_new = [], iter(kept), iter(new)
        for position in range(len(kept) + len(new)):
            result.append(next(it_new) if position in at else next(it_kept))
        old_to_new = np.full(len(texts), -1)
        kept_positions = [p for p in range(len(result)) if p not in at]
        old_to_new[[i for i in range(len(texts)) if i not in gone]] = kept_positions
        index = index.changed(old_to_new=old_to_new, size=len(result), added=list(zip(at, new)))
        texts = result
        cold = keywords.KeywordIndex(texts)
        for query in ("java tea", "北京的咖啡", "volunteer garden", "nothing here"):
            assert index.raw_scores(query).tolist() == cold.raw_scores(query).tolist()
            assert index.scores(query).tolist() == cold.scores(query).tolist()


@settings(max_examples=200, deadline=None)
@given(before=st.dictionaries(st.sampled_from(["a1", "b2", "c3", "d4", "é5", "北6", "f7"]), st.sampled_from(["v1", "v2"])),
       after=st.dictionaries(st.sampled_from(["a1", "b2", "c3", "d4", "é5", "北6", "f7"]), st.sampled_from(["v1", "v2"])))
def test_the_rows_that_changed_are_found_whatever_the_ids(before, after):
    """What a search re-reads after a change: every row gone or of another version, every row new or of
    another version, and nothing else (ids outside ASCII included, beside ASCII ones)."""
    def keys(rows):
        ids = sorted(rows)
        return ids, version_keys(ids, [rows[pk] for pk in ids])

    old_ids, old = keys(before)
    new_ids, new = keys(after)
    gone, added = keys_changed(old, new)
    assert [old_ids[i] for i in gone] == [pk for pk in old_ids if after.get(pk) != before[pk]]
    assert [new_ids[i] for i in added] == [pk for pk in new_ids if before.get(pk) != after[pk]]
