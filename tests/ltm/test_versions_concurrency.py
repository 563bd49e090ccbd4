"""Concurrent edits and conflict resolutions on MariaDB: versions stay numbered 1..n without gaps, a pair is
resolved once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from memoryboard.ltm.store.items import MemoryError
from memoryboard.ltm.write.edits import memory_update
from memoryboard.models import LongTermMemory, MemoryVersion

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


def _run(workers):
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(workers))

    def wrap(work):
        try:
            barrier.wait()
            work()
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrap, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_concurrent_edits_each_get_their_own_version(alice, make_memory):
    if connection.vendor != "mysql":
        pytest.skip("concurrency is tested on MariaDB/MySQL")
    item = make_memory(alice, "User lives in Shanghai")
    workers = [lambda n=n: memory_update(memory=item, actor=alice, content=f"User lives in city {n}") for n in range(6)]
    assert _run(workers) == []
    versions = list(MemoryVersion.objects.filter(memory_id=item.pk).order_by("version"))
    assert [v.version for v in versions] == list(range(1, 8))
    for earlier, later in zip(versions, versions[1:]):
        assert later.before_content == earlier.after_content  # a chain: no edit lost between two versions
    assert LongTermMemory.objects.get(pk=item.pk).content == versions[-1].after_content


def test_a_conflict_resolved_twice_at_once_is_resolved_once(alice, bob, make_memory):
    if connection.vendor != "mysql":
        pytest.skip("concurrency is tested on MariaDB/MySQL")
    from memoryboard.ltm.write.review import memory_conflict_resolve

    old = make_memory(alice, "User lives in Shanghai")
    new = make_memory(alice, "User lives in Berlin")
    LongTermMemory.objects.filter(pk=old.pk).update(value_json={**old.value_json, "conflictWith": [new.pk]})
    LongTermMemory.objects.filter(pk=new.pk).update(value_json={**new.value_json, "conflictWith": [old.pk]})
    new, old = LongTermMemory.objects.get(pk=new.pk), LongTermMemory.objects.get(pk=old.pk)
    errors = _run([lambda: memory_conflict_resolve(new=new, old=old, keep="new", actor=alice),
                   lambda: memory_conflict_resolve(new=new, old=old, keep="old", actor=bob)])
    assert len(errors) == 1 and isinstance(errors[0], MemoryError) and errors[0].field == "pair"
    states = {m.pk: m.archived_reason for m in LongTermMemory.objects.filter(pk__in=[new.pk, old.pk])}
    assert sorted(str(v) for v in states.values()) in (["None", "superseded"], ["None", "rejected"])
