"""Upsert of memory items: one row per id, the last write wins, on SQLite and MariaDB."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.store.upsert import memory_upsert_many
from memoryboard.models import LongTermMemory


def item(pk: str, content: str, *, user: str = "42") -> LongTermMemory:
    now = timezone.now()
    return LongTermMemory(
        id=pk,
        namespace=build_namespace(agent_namespace="chat", user_id=user).as_text(),
        key_name=pk,
        value_json={"content": content, "agentId": "chat", "source": "agent_tool", "type": "FACT"},
        created_at=now,
        updated_at=now,
    )


@pytest.mark.django_db
def test_second_upsert_of_the_same_id_updates_and_never_duplicates():
    memory_upsert_many([item("m-1", "first"), item("m-2", "other")])
    LongTermMemory.objects.filter(pk="m-1").update(access_count=7)

    memory_upsert_many([item("m-1", "second")])

    assert LongTermMemory.objects.count() == 2
    row = LongTermMemory.objects.get(pk="m-1")
    assert row.content == "second"
    assert row.access_count == 7, "access statistics survive a re-save"


@pytest.mark.django_db
def test_upsert_emits_the_backends_native_statement():
    with CaptureQueriesContext(connection) as ctx:
        memory_upsert_many([item("m-1", "x")])
    sql = " ".join(q["sql"] for q in ctx.captured_queries).upper()
    if connection.vendor == "mysql":
        assert "ON DUPLICATE KEY UPDATE" in sql
    else:
        assert "ON CONFLICT" in sql
    assert "MERGE INTO" not in sql


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_eight_threads_upserting_the_same_ids_leave_exactly_one_row_each():
    if connection.vendor != "mysql":
        pytest.skip("concurrency contract is tested on MariaDB/MySQL")
    ids = [f"c-{i:04d}" for i in range(1000)]
    rounds = 3
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def writer(thread: int) -> None:
        try:
            barrier.wait()
            for r in range(rounds):
                memory_upsert_many([item(pk, f"t{thread}-r{r}") for pk in ids], batch_size=250)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert not errors, errors
    assert LongTermMemory.objects.count() == 1000
    last_values = {f"t{t}-r{rounds - 1}" for t in range(8)}
    contents = {row.content for row in LongTermMemory.objects.all()}
    assert contents <= last_values, "every row holds a value from some writer's last round"
