"""An erase that overlaps a running extraction: nothing of the extraction survives, whatever the timing.

Real threads, real transactions, the real ``openai`` client against the fake server, which holds its
reply (or the embeddings of the extracted items) while the erase runs. On MariaDB the two transactions
meet on the erase tombstone's row lock; on SQLite on the database's write lock.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.db import connection, connections
from django.utils import timezone

from memoryboard.agents_config import parse_agents_config
from memoryboard.ltm.people.user_data import user_data_erase
from memoryboard.models import EraseTombstone, LongTermMemory
from memoryboard.ltm.write.tasks import extract_memories_task

pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = parse_agents_config({"agent": {"agents": {
    "chat": {"long-term-memory": {"enabled": True, "namespace": "chat", "max-items": 50}},
}}})
TURN = [{"role": "user", "content": "I love hiking in the Alps every summer"}]


@pytest.fixture(autouse=True)
def agents(monkeypatch):
    monkeypatch.setattr("memoryboard.ltm.write.extraction.get_agents_config", lambda: CONFIG)


@pytest.fixture
def online(openai_settings, settings):
    settings.OPENAI_TIMEOUT_SECONDS = 10
    return openai_settings


def _extract_in_thread(user_id: str, turn_at: str) -> tuple[threading.Thread, list]:
    out: list = []

    def run():
        try:
            out.append(extract_memories_task.call(agent_id="chat", user_id=user_id, conversation_id="c-late",
                                                  conversation=TURN, turn_at=turn_at))
        except Exception as exc:  # noqa: BLE001 - reported by the test
            out.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _wait_for(predicate, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def _dump() -> str:
    from django.apps import apps
    from django.core import serializers

    return "".join(serializers.serialize("json", model.objects.all()) for model in apps.get_models())


def _reply(marker: str) -> str:
    return json.dumps([{"type": "FACT", "content": f"User loves hiking {marker}"}])


def test_an_extraction_answered_after_the_erase_writes_nothing_back(online, alice, make_memory):
    make_memory(alice, "User lives in Zurich")
    uid = str(alice.pk)
    online.push_reply(content=_reply("LATEMARK"))
    online.push_delay("chat/completions", 1.5)
    thread, out = _extract_in_thread(uid, timezone.now().isoformat())
    _wait_for(lambda: online.chat_requests())  # the model is "thinking"
    user_data_erase(user_id=uid, actor=alice)
    thread.join(20)
    assert out == [[]]  # refused: nothing saved
    assert not LongTermMemory.objects.exists()
    assert "LATEMARK" not in _dump()
    assert EraseTombstone.objects.get().erased_at is not None


def test_an_extraction_saving_while_the_erase_starts_is_erased_with_the_rest(online, alice):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite's test database is in memory (shared cache): a second writer fails at once instead "
                    "of waiting on the busy timeout as the embedded file database does; run on MariaDB")
    # The extraction has passed the gate and holds its transaction open (waiting for the embeddings of the
    # extracted items) when the erase begins: the erase waits for it, then removes what it saved.
    uid = str(alice.pk)
    online.push_reply(content=_reply("SAVINGMARK"))
    online.push_delay("embeddings", 1.5)
    thread, out = _extract_in_thread(uid, timezone.now().isoformat())
    _wait_for(lambda: online.embedding_requests())
    user_data_erase(user_id=uid, actor=alice)
    thread.join(20)
    assert len(out) == 1 and len(out[0]) == 1  # it was saved ...
    assert not LongTermMemory.objects.exists()  # ... and erased
    assert "SAVINGMARK" not in _dump()


def test_a_user_who_comes_back_starts_over(online, alice):
    uid = str(alice.pk)
    user_data_erase(user_id=uid, actor=alice)
    online.push_reply(content=_reply("AGAIN"))
    saved = extract_memories_task.call(agent_id="chat", user_id=uid, conversation_id="c-new", conversation=TURN,
                                       turn_at=timezone.now().isoformat())
    assert [m.content for m in LongTermMemory.objects.filter(pk__in=saved)] == ["User loves hiking AGAIN"]


def test_a_task_queued_before_the_erase_saves_nothing_even_if_it_starts_after(online, alice):
    uid = str(alice.pk)
    turn_at = timezone.now().isoformat()
    user_data_erase(user_id=uid, actor=alice)
    online.push_reply(content=_reply("QUEUEDMARK"))
    assert extract_memories_task.call(agent_id="chat", user_id=uid, conversation_id="c-old", conversation=TURN,
                                      turn_at=turn_at) == []
    assert not LongTermMemory.objects.exists()


def test_a_running_task_keeps_its_row_without_arguments_and_queued_ones_go(alice, bob):
    # A worker updates its task's row when the task ends (and stops if the row is gone): the running task
    # of the user loses its arguments (the turn's text), queued and finished ones are deleted.
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    from memoryboard.task_recovery import EXTRACT_TASK_PATH
    from memoryboard.ltm.people.user_data import memory_export_payload

    def task(user, status, text):
        return DBTaskResult.objects.create(
            args_kwargs={"args": [], "kwargs": {"agent_id": "chat", "user_id": str(user.pk), "conversation_id": "c",
                                                "conversation": [{"role": "user", "content": text}]}},
            task_path=EXTRACT_TASK_PATH, backend_name="default", queue_name="default", run_after=timezone.now(),
            exception_class_path="", traceback="", priority=0, status=status,
        )

    running = task(alice, TaskResultStatus.RUNNING, "RUNMARK I fly planes")
    queued = task(alice, TaskResultStatus.READY, "QUEUEMARK I sail")
    theirs = task(bob, TaskResultStatus.READY, "bob sails")
    user_data_erase(user_id=str(alice.pk), actor=alice)
    running.refresh_from_db()
    assert running.status == TaskResultStatus.RUNNING and running.args_kwargs == {"args": [], "kwargs": {}}
    assert not DBTaskResult.objects.filter(pk=queued.pk).exists()
    assert DBTaskResult.objects.filter(pk=theirs.pk).exists()
    assert memory_export_payload(user_id=str(alice.pk))["tasks"] == []
    assert "RUNMARK" not in _dump() and "QUEUEMARK" not in _dump()


def test_a_read_logged_before_the_erase_leaves_no_access_row_after_it(alice, bob, make_memory):
    from memoryboard.ltm.search.access_log import AccessRecord, write_access_records
    from memoryboard.models import MemoryAccess

    mine, theirs = make_memory(alice, "User likes tea"), make_memory(bob, "User likes coffee")
    read = AccessRecord(ids=(mine.pk, theirs.pk), relevances=(0.9, 0.8), agent_id="chat", conversation_id="c",
                        kind="retrieval", at=timezone.now())
    user_data_erase(user_id=str(alice.pk), actor=alice)
    write_access_records([read])  # the background writer drains its queue after the erase
    assert list(MemoryAccess.objects.values_list("memory_id", flat=True)) == [theirs.pk]
    later = AccessRecord(ids=(theirs.pk,), relevances=(0.7,), agent_id="chat", conversation_id="c",
                         kind="retrieval", at=timezone.now())
    write_access_records([later])
    assert MemoryAccess.objects.count() == 2
