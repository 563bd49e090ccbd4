"""The HNSW index of large scopes: built by a command, following the change log on every host, filtered like exact
search; erased vectors gone from the files; a broken file is a slower search, not an outage."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from memoryboard.ltm.search import ann, retrieval
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.models import MemoryFlag

pytestmark = pytest.mark.django_db


@pytest.fixture
def ann_dir(settings, tmp_path):
    settings.MEMORYBOARD_ANN_DIR = str(tmp_path / "ann")
    ann._views.clear()
    yield tmp_path / "ann"
    ann._views.clear()


def test_large_scopes_use_the_index_and_keep_scope_and_state(monkeypatch, ann_dir, support_user, alice, bob,
                                                             make_memory):
    mine = [make_memory(alice, f"User learns Java, lesson {i}") for i in range(6)]
    archived = make_memory(alice, "User learns Java at night", archived_reason="staff")
    paused = make_memory(bob, "User learns Java on weekends")
    MemoryFlag.objects.create(memory_id=paused.pk, paused=True)
    make_memory(bob, "User likes tea")
    out = StringIO()
    call_command("ann_rebuild", "--no-progress", stdout=out)
    assert "Indexed 8 vector(s)" in out.getvalue()  # the archived item is left out and ann.index_path("hashing-ngram-384").exists()

    monkeypatch.setattr(retrieval, "EXACT_MAX", 3)  # every scope here is "large"
    staff = memory_rank(queryset=memory_queryset_for(support_user), query="Java lesson", k=10)
    assert staff.index == "hnsw"
    assert {r.memory.pk for r in staff.results} == {m.pk for m in mine}
    assert archived.pk not in {c.memory_id for c in staff.candidates}
    assert {c.outcome for c in staff.candidates if c.memory_id == paused.pk} == {"paused"}
    own = memory_rank(queryset=memory_queryset_for(bob), query="Java lesson", k=10, user_id=str(bob.pk))
    assert not own.results  # Bob's scope: his paused item only, never Alice's

    monkeypatch.setattr(retrieval, "EXACT_MAX", 20_000)
    exact = memory_rank(queryset=memory_queryset_for(support_user), query="Java lesson", k=10)
    assert exact.index == "exact" and [r.memory.pk for r in exact.results] == [r.memory.pk for r in staff.results]


def test_new_items_reach_the_index_through_the_task(monkeypatch, ann_dir, support_user, alice, make_memory,
                                                     django_capture_on_commit_callbacks):
    make_memory(alice, "User drinks tea")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        new = make_memory(alice, "User plays the violin")  # after the commit, the task updates the index
    assert len(callbacks) == 1
    index = ann._snapshot("hashing-ngram-384")[0]
    assert len(index) == 2
    monkeypatch.setattr(retrieval, "EXACT_MAX", 1)
    found = memory_rank(queryset=memory_queryset_for(support_user), query="violin", k=3)
    assert found.index == "hnsw" and [r.memory.pk for r in found.results] == [new.pk]


def test_without_an_index_large_scopes_are_searched_exactly(monkeypatch, ann_dir, support_user, alice, make_memory):
    item = make_memory(alice, "User plays the violin")
    make_memory(alice, "User drinks tea")
    monkeypatch.setattr(retrieval, "EXACT_MAX", 1)
    found = memory_rank(queryset=memory_queryset_for(support_user), query="violin", k=3)
    assert found.index == "exact" and [r.memory.pk for r in found.results] == [item.pk]


def _indexed_items(model_name: str = "hashing-ngram-384") -> set[str]:
    from memoryboard.models import MemoryEmbedding

    index = ann._snapshot(model_name)[0]
    rows = MemoryEmbedding.objects.filter(model_name=model_name).values_list("id", "memory_id")
    return {memory_id for key, memory_id in rows if key in index}


def test_archiving_and_restoring_update_the_index_through_the_task(monkeypatch, ann_dir, support_user, alice, bob,
                                                                   make_memory, django_capture_on_commit_callbacks):
    from memoryboard.ltm.store.lifecycle import memory_archive_many
    from memoryboard.ltm.store.items import (
        memory_archive, memory_delete_all_for_user, memory_delete_for_user, memory_restore, memory_restore_for_user,
    )

    violin = make_memory(alice, "User plays the violin")
    cello = make_memory(alice, "User plays the cello")
    tea = make_memory(alice, "User drinks tea")
    piano = make_memory(bob, "User plays the piano")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    assert _indexed_items() == {violin.pk, cello.pk, tea.pk, piano.pk}

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        memory_archive(memory=violin, actor=support_user)
    assert len(callbacks) == 1 and _indexed_items() == {cello.pk, tea.pk, piano.pk}
    monkeypatch.setattr(retrieval, "EXACT_MAX", 1)
    found = memory_rank(queryset=memory_queryset_for(support_user), query="violin", k=3)
    assert found.index == "hnsw" and violin.pk not in {c.memory_id for c in found.candidates}

    with django_capture_on_commit_callbacks(execute=True):
        memory_restore(memory=violin, actor=support_user)
    assert _indexed_items() == {violin.pk, cello.pk, tea.pk, piano.pk}
    found = memory_rank(queryset=memory_queryset_for(support_user), query="violin", k=3)
    assert found.index == "hnsw" and found.results[0].memory.pk == violin.pk

    with django_capture_on_commit_callbacks(execute=True):
        memory_archive_many(ids=[cello.pk, tea.pk], reason="decay")  # the decay job and the item limit
    assert _indexed_items() == {violin.pk, piano.pk}
    with django_capture_on_commit_callbacks(execute=True):
        memory_delete_for_user(memory=violin, actor=alice)  # a user's delete
    assert _indexed_items() == {piano.pk}
    with django_capture_on_commit_callbacks(execute=True):
        memory_restore_for_user(memory=violin, actor=alice)
    assert _indexed_items() == {violin.pk, piano.pk}
    with django_capture_on_commit_callbacks(execute=True):
        memory_delete_all_for_user(user_id=str(bob.pk), actor=bob)
    assert _indexed_items() == {violin.pk}
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())  # a rebuild agrees with the updates
    assert _indexed_items() == {violin.pk}


def test_archiving_without_an_index_queues_nothing(ann_dir, support_user, alice, make_memory,
                                                   django_capture_on_commit_callbacks):
    from memoryboard.ltm.store.items import memory_archive

    item = make_memory(alice, "User plays the violin")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        memory_archive(memory=item, actor=support_user)
    assert callbacks == []


def test_a_large_scope_reads_its_candidates_with_their_vectors_in_one_query(monkeypatch, ann_dir, support_user,
                                                                          alice, bob, make_memory):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    items = [make_memory(user, f"User learns Java, lesson {i}") for i, user in enumerate([alice, bob] * 4)]
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    monkeypatch.setattr(retrieval, "EXACT_MAX", 3)
    with CaptureQueriesContext(connection) as queries:
        found = memory_rank(queryset=memory_queryset_for(support_user), query="Java lesson", k=10)
    assert found.index == "hnsw" and {r.memory.pk for r in found.results} == {m.pk for m in items}
    # Items, state, pause, content and vectors of every candidate: one query (was three, each ~1,000
    # random rows at 1M items), whatever the number of candidates.
    assert len([q for q in queries.captured_queries if "memoryboard_embedding" in q["sql"]]) == 1


def test_the_rebuild_reads_in_chunks_and_leaves_out_archived_items_and_bad_vectors(monkeypatch, ann_dir, alice,
                                                                                   make_memory):
    from memoryboard.models import MemoryEmbedding

    items = [make_memory(alice, f"User plays instrument {i}") for i in range(7)]
    make_memory(alice, "User played the oboe", archived_reason="staff")
    MemoryEmbedding.objects.filter(memory_id=items[3].pk).update(vector=b"\0" * 12)  # not this model's size
    monkeypatch.setattr(ann, "BUILD_BATCH", 2)  # 5 chunks of rows, each added while the next is read
    batches = []
    done = ann.ann_rebuild(model_name="hashing-ngram-384", dim=384, on_batch=batches.append)
    assert done == 6 and sum(batches) == 8 and len(batches) == 4
    assert _indexed_items() == {m.pk for i, m in enumerate(items) if i != 3}


MODEL = "hashing-ngram-384"


@pytest.fixture
def saves(monkeypatch):
    """Every save of an index file by the code under test (the real save still runs)."""
    calls = []
    real = ann._save

    def spy(index, model_name, position):
        calls.append(model_name)
        real(index, model_name, position)

    monkeypatch.setattr(ann, "_save", spy)
    return calls


def _log(op: str | None = None) -> list[str]:
    from memoryboard.models import AnnChange

    rows = AnnChange.objects.filter(model_name=MODEL).exclude(op="build")
    return list((rows.filter(op=op) if op else rows).values_list("memory_id", flat=True))


def _position() -> int:
    return ann._read_position(MODEL).seq


def _last_seq() -> int:
    from memoryboard.models import AnnChange

    return AnnChange.objects.order_by("-id").values_list("id", flat=True).first()


def test_many_writes_reach_the_index_in_one_save_and_later_tasks_touch_nothing(
        ann_dir, alice, bob, make_memory, saves, django_capture_on_commit_callbacks):
    make_memory(alice, "User drinks tea")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    saves.clear()
    mtime = ann.index_path(MODEL).stat().st_mtime_ns
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        new = [make_memory(user, f"User plays instrument number {i}") for i, user in enumerate([alice, bob] * 10)]
    assert len(callbacks) == 20 and sorted(_log("add")) == sorted(m.pk for m in new)
    assert saves == [] and ann.index_path(MODEL).stat().st_mtime_ns == mtime  # nothing written yet

    for callback in callbacks:  # the 20 queued tasks: the first applies every write, the others find none
        callback()
    assert saves == [MODEL] and _position() == _last_seq()
    assert sorted(_log("add")) == sorted(m.pk for m in new)  # the log is never consumed: other hosts read it
    assert len(ann._snapshot(MODEL)[0]) == 21 and _indexed_items() >= {m.pk for m in new}
    mtime = ann.index_path(MODEL).stat().st_mtime_ns

    from memoryboard.ltm.search.tasks import ann_update_task

    assert ann_update_task.call(model_name=MODEL) == 0  # a task queued later: nothing past the position
    assert saves == [MODEL] and ann.index_path(MODEL).stat().st_mtime_ns == mtime


def test_archive_and_restore_are_logged_and_applied_together(ann_dir, support_user, alice, make_memory, saves,
                                                             django_capture_on_commit_callbacks):
    from memoryboard.ltm.store.items import memory_archive, memory_restore

    violin, cello, tea = (make_memory(alice, text) for text in ("User plays the violin", "User plays the cello",
                                                                "User drinks tea"))
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    saves.clear()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        memory_archive(memory=violin, actor=support_user)
        memory_archive(memory=cello, actor=support_user)
        memory_restore(memory=cello, actor=support_user)
    assert _log("remove") == [violin.pk, cello.pk] and _log("add") == [cello.pk]
    assert _indexed_items() == {violin.pk, cello.pk, tea.pk}  # not applied yet
    for callback in callbacks:
        callback()
    assert saves == [MODEL] and _indexed_items() == {cello.pk, tea.pk}


def test_a_failure_while_applying_keeps_the_position(monkeypatch, ann_dir, alice, make_memory,
                                                     django_capture_on_commit_callbacks):
    make_memory(alice, "User drinks tea")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    before = _position()
    with django_capture_on_commit_callbacks(execute=False):
        violin = make_memory(alice, "User plays the violin")

    def broken(index, model_name, position):
        raise OSError("disk full")

    monkeypatch.setattr(ann, "_save", broken)
    with pytest.raises(OSError):
        ann.ann_follow(model_name=MODEL)
    assert _position() == before and violin.pk not in _indexed_items()

    monkeypatch.undo()
    assert ann.ann_follow(model_name=MODEL) == 1
    assert _position() == _last_seq() and violin.pk in _indexed_items()


def test_without_an_index_nothing_is_logged(ann_dir, alice, make_memory, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        make_memory(alice, "User plays the violin")
    assert callbacks == [] and _log() == []


def test_a_rebuild_covers_the_log_written_before_it(ann_dir, alice, make_memory, saves,
                                                    django_capture_on_commit_callbacks):
    make_memory(alice, "User drinks tea")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        violin = make_memory(alice, "User plays the violin")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    assert violin.pk in _indexed_items() and _position() == _last_seq()
    saves.clear()
    callbacks[0]()  # the task queued by the write: the rebuild did its work
    assert saves == []


def test_a_task_queued_with_item_ids_before_the_log_still_applies_them(ann_dir, alice, make_memory):
    from memoryboard.models import AnnChange
    from memoryboard.ltm.search.tasks import ann_update_task

    make_memory(alice, "User drinks tea")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    violin = make_memory(alice, "User plays the violin")  # its own task is never run (not committed)
    AnnChange.objects.exclude(op="build").delete()  # as if written before the log existed
    assert ann_update_task.call(model_name=MODEL, memory_ids=[violin.pk]) == 1
    assert violin.pk in _indexed_items()


def test_reembed_with_an_index_ends_with_the_index_up_to_date(ann_dir, alice, bob, make_memory, saves,
                                                              django_capture_on_commit_callbacks):
    import numpy as np

    from memoryboard.ltm.search.embeddings import memory_reembed
    from memoryboard.models import MemoryEmbedding

    items = [make_memory(user, f"User collects stamps from country {i}") for i, user in enumerate([alice, bob] * 6)]
    right = {pk: bytes(blob) for pk, blob in MemoryEmbedding.objects.filter(model_name=MODEL)
             .values_list("id", "vector")}
    rng = np.random.default_rng(7)
    for pk in right:  # the index is built from other vectors, which the re-embedding replaces
        MemoryEmbedding.objects.filter(pk=pk).update(vector=rng.standard_normal(384).astype(np.float32).tobytes())
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    saves.clear()

    def own_key_first() -> int:
        index = ann._snapshot(MODEL)[0]
        return sum(int(index.search(np.frombuffer(blob, dtype=np.float32), count=1).keys[0]) == pk
                   for pk, blob in right.items())

    assert own_key_first() < len(items) // 2
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert memory_reembed(batch_size=5) == len(items)
    assert len(callbacks) == 3 and saves == [MODEL]
    assert len(ann._snapshot(MODEL)[0]) == len(items) and own_key_first() == len(items)


def test_the_log_is_pruned_and_a_host_behind_it_rebuilds(ann_dir, support_user, alice, make_memory, monkeypatch,
                                                         django_capture_on_commit_callbacks):
    from memoryboard.models import AnnChange

    tea = make_memory(alice, "User drinks tea")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    stale = ann._read_position(MODEL)
    with django_capture_on_commit_callbacks(execute=True):
        items = [make_memory(alice, f"User plays instrument number {i}") for i in range(5)]
    monkeypatch.setattr(ann, "LOG_KEEP_ROWS", 2)
    assert ann.ann_log_prune() > 0
    assert AnnChange.objects.filter(model_name=MODEL).exists()  # the model stays indexed
    current = ann._read_position(MODEL)
    ann._write_position(MODEL, ann.Position(seq=stale.seq, size=current.size, crc=current.crc))  # fell behind
    ann._views.clear()
    monkeypatch.setattr(retrieval, "EXACT_MAX", 1)
    found = memory_rank(queryset=memory_queryset_for(support_user), query="instrument number 3", k=3)
    assert found.index == "hnsw" and found.results[0].memory.pk == items[3].pk  # rebuilt by the follower
    assert _indexed_items() == {m.pk for m in items} | {tea.pk}


def test_removed_slots_hold_fillers_until_new_vectors_take_them_and_a_quarter_of_fillers_rebuilds(
        ann_dir, monkeypatch, support_user, alice, make_memory, django_capture_on_commit_callbacks):
    from memoryboard.ltm.store.items import memory_archive

    items = [make_memory(alice, f"User plays instrument number {i}") for i in range(8)]
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    with django_capture_on_commit_callbacks(execute=True):
        memory_archive(memory=items[0], actor=support_user)
    index = ann._snapshot(MODEL)[0]
    assert len(ann._fillers(index)) == 1 and index.stats.nodes == len(index) == 8  # no slot left free
    with django_capture_on_commit_callbacks(execute=True):
        new = make_memory(alice, "User plays the harp")
    index = ann._snapshot(MODEL)[0]
    assert len(ann._fillers(index)) == 0 and index.stats.nodes == 8  # the new vector took the filler's slot
    assert _indexed_items() == {m.pk for m in items[1:]} | {new.pk}

    monkeypatch.setattr(ann, "FILLERS_MIN", 0)
    with django_capture_on_commit_callbacks(execute=True):
        for item in items[1:4]:  # 3 fillers in 8 slots: more than a quarter
            memory_archive(memory=item, actor=support_user)
    index = ann._snapshot(MODEL)[0]
    assert len(ann._fillers(index)) == 0 and len(index) == 5  # rebuilt without them
    assert _indexed_items() == {m.pk for m in items[4:]} | {new.pk}


def test_a_change_committed_after_a_later_one_is_still_applied(ann_dir, monkeypatch, alice, make_memory):
    """Sequence numbers are taken at insert, commits land in any order: a number missing below a host's
    position (a transaction still open) is read again until it appears, for ``GAP_WAIT`` seconds."""
    from memoryboard.models import AnnChange, LongTermMemory

    tea = make_memory(alice, "User drinks tea")
    late = make_memory(alice, "User plays the violin", archived_reason="staff")
    early = make_memory(alice, "User plays the cello", archived_reason="staff")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())  # without them
    LongTermMemory.objects.filter(pk__in=[late.pk, early.pk]).update(archived=False)  # the two writes below
    start = _last_seq()
    AnnChange.objects.create(id=start + 2, model_name=MODEL, op="add", memory_id=early.pk)  # committed first
    assert ann.ann_follow(model_name=MODEL) == 1
    assert ann._read_position(MODEL).seq == start + 2 and start + 1 in ann._read_position(MODEL).gaps
    AnnChange.objects.create(id=start + 1, model_name=MODEL, op="add", memory_id=late.pk)  # its commit lands
    assert ann.ann_follow(model_name=MODEL) == 1
    assert _indexed_items() == {tea.pk, late.pk, early.pk} and start + 1 not in ann._read_position(MODEL).gaps

    AnnChange.objects.create(id=start + 4, model_name=MODEL, op="add", memory_id=tea.pk)
    ann.ann_follow(model_name=MODEL)
    assert start + 3 in ann._read_position(MODEL).gaps
    monkeypatch.setattr(ann, "GAP_WAIT", 0)  # rolled back, or open for longer than GAP_WAIT: given up
    ann.ann_follow(model_name=MODEL)
    assert ann._read_position(MODEL).gaps == {}


def test_a_host_with_nothing_new_to_follow_does_not_load_its_file(ann_dir, monkeypatch, alice, make_memory):
    """The worker's task after every write: when another task already applied the log, it finds nothing
    past the position and leaves the file alone (loading it was ~1 s at 1M items); a new change is applied."""
    tea = make_memory(alice, "User drinks tea")
    call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    loads = []
    load = ann._load
    monkeypatch.setattr(ann, "_load", lambda model_name: (loads.append(model_name), load(model_name))[1])
    assert ann.ann_follow(model_name=MODEL) == 0
    assert loads == []
    violin = make_memory(alice, "User plays the violin")  # logged by its save
    assert ann.ann_follow(model_name=MODEL) == 1
    assert loads == [MODEL] and _indexed_items() == {tea.pk, violin.pk}
    assert ann.ann_follow(model_name=MODEL) == 0 and loads == [MODEL]
