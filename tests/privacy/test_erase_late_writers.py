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

from memoryboard.ltm.config import parse_agents_config
from memoryboard.ltm.user_data import user_data_erase
from memoryboard.models import EraseTombstone, LongTermMemory
from memoryboard.tasks import extract_memories_task

pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = parse_agents_config({"agent": {"agents": {
    "chat": {"long-term-memory": {"enabled": True, "namespace": "chat", "max-items": 50}},
}}})
TURN = [{"role": "user", "content": "I love hiking in the Alps every summer"}]


@pytest.fixture(autouse=True)
def agents(monkeypatch):
    monkeypatch.setattr("memoryboard.ltm.extraction.get_agents_config", lambda: CONFIG)


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
