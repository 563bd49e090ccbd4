"""Expired items are archived (``archived = 1``, reason ``expired``) by the worker on a schedule
(``MEMORYBOARD_EXPIRY_SWEEP_MINUTES``, as LangGraph's ``sweep_interval_minutes``), on the embedded thread
backend and on django-tasks-db's ``db_worker`` alike, with nobody running ``memory_cleanup --apply``: the
platform, which loads every row with ``archived = 0``, stops loading them by itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.cache import caches
from django.db import connection
from django.utils import timezone

from memoryboard.ltm.store import tasks as store_tasks
from memoryboard.ltm.store.tasks import archive_expired_task, expiry_sweep_now, expiry_sweep_start
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory, MemoryStateChange

ROOT = Path(__file__).resolve().parents[2]


def _expire(memory, hours: float = -1) -> None:
    moment = timezone.now() + timedelta(hours=hours)
    LongTermMemory.objects.filter(pk=memory.pk).update(
        value_json={**memory.value_json, "expiresAt": moment.strftime("%Y-%m-%dT%H:%M:%SZ")})


@pytest.mark.django_db
def test_the_sweep_archives_every_expired_item_and_nothing_else(alice, bob, make_memory):
    gone = [make_memory(alice, "User has a dentist appointment today"), make_memory(bob, "User is in Rome this week")]
    for memory in gone:
        _expire(memory)
    later = make_memory(alice, "User has a flight next month")
    _expire(later, hours=24)
    kept = make_memory(alice, "User is a Rust developer")
    assert archive_expired_task.call() == 2
    for memory in gone:
        memory.refresh_from_db()
        assert memory.archived and memory.archived_reason == ArchivedReason.EXPIRED
        assert MemoryStateChange.objects.get(memory_id=memory.pk).new_state == "expired"
        assert AuditLog.objects.get(object_id=memory.pk, action="archive").actor_label == "expiry"
    assert not LongTermMemory.objects.filter(pk__in=[later.pk, kept.pk], archived=True).exists()
    assert archive_expired_task.call() == 0  # safe to run again


@pytest.mark.django_db
def test_one_process_of_the_deployment_sweeps_per_interval(settings, alice, make_memory):
    settings.MEMORYBOARD_EXPIRY_SWEEP_MINUTES = 5
    memory = make_memory(alice, "User has a dentist appointment today")
    _expire(memory)
    expiry_sweep_now()
    assert LongTermMemory.objects.get(pk=memory.pk).archived_reason == ArchivedReason.EXPIRED
    second = make_memory(alice, "User is in Rome this week")
    _expire(second)
    expiry_sweep_now()  # another process, the same interval: the shared cache says it is done
    assert not LongTermMemory.objects.get(pk=second.pk).archived
    caches["shared"].delete(store_tasks.SWEEP_CACHE_KEY)  # the interval has passed
    expiry_sweep_now()
    assert LongTermMemory.objects.get(pk=second.pk).archived_reason == ArchivedReason.EXPIRED


def test_the_schedule_sweeps_at_start_then_every_interval_and_stops_at_zero(settings, monkeypatch):
    runs = []
    monkeypatch.setattr(store_tasks, "expiry_sweep_now", lambda: runs.append(time.monotonic()))
    monkeypatch.setattr(store_tasks._sweeper, "thread", None)
    settings.MEMORYBOARD_EXPIRY_SWEEP_MINUTES = 0.2 / 60
    started = time.monotonic()
    expiry_sweep_start()
    expiry_sweep_start()  # once per process
    thread = store_tasks._sweeper.thread
    deadline = time.monotonic() + 10
    while len(runs) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    settings.MEMORYBOARD_EXPIRY_SWEEP_MINUTES = 0
    thread.join(5)
    assert not thread.is_alive() and len(runs) >= 3
    assert runs[0] - started < 0.5  # at start, not after the first interval
    assert all(b - a >= 0.15 for a, b in zip(runs, runs[1:]))


SCRIPT = """
import json, sys, time
import django
django.setup()
from django.utils import timezone
from memoryboard.models import LongTermMemory
from memoryboard.ltm.store.tasks import expiry_sweep_start

expiry_sweep_start()
deadline = time.monotonic() + 30
while time.monotonic() < deadline and not LongTermMemory.objects.filter(pk=sys.argv[1], archived=True).exists():
    time.sleep(0.2)
row = LongTermMemory.objects.get(pk=sys.argv[1])
print(json.dumps({"archived": row.archived, "reason": row.archived_reason}))
"""

SEED = """
import json
from datetime import timedelta
from django.utils import timezone
from memoryboard.ltm.write.items import memory_create
from memoryboard.models.namespaces import build_namespace
memory = memory_create(namespace=build_namespace(agent_namespace="chat", user_id="7"), content="User is in Rome",
                       memory_type="EPISODE", agent_id="chat", expires_at=timezone.now() + timedelta(seconds=2))
print(json.dumps({"id": memory.pk}))
"""


def test_the_embedded_thread_backend_sweeps_in_the_web_process(tmp_path):
    """The embedded default (a SQLite file, tasks on a thread of the process): an item that expires while
    the process runs is archived by it, with no read and no command."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "MEMORYBOARD_EMBEDDER": "hashing",
           "MEMORYBOARD_EXPIRY_SWEEP_MINUTES": str(0.5 / 60), "DJANGO_SETTINGS_MODULE": "memoryboard.settings",
           "MEMORYBOARD_TASKS_BACKEND": "memoryboard.tasks_backend.ThreadBackend", "OPENAI_BASE_URL": ""}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    seeded = subprocess.run([sys.executable, "manage.py", "shell", "-c", SEED], cwd=ROOT, env=env, check=True,
                            capture_output=True, text=True)
    memory_id = json.loads(seeded.stdout.strip().splitlines()[-1])["id"]
    done = subprocess.run([sys.executable, "-c", SCRIPT, memory_id], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"archived": True, "reason": "expired"}


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_a_db_worker_sweeps_on_its_schedule(alice, make_memory):
    """django-tasks-db: ``manage.py tasks_worker`` queues the sweep on its schedule and runs it."""
    if connection.vendor != "mysql":
        pytest.skip("the worker process shares the test database only on MariaDB/MySQL (SQLite's is in memory)")
    memory = make_memory(alice, "User has a dentist appointment today")
    _expire(memory)
    with connection.cursor() as cursor:  # the shared cache table: an earlier host's sweep mark outlives its test
        cursor.execute("DELETE FROM memoryboard_cache")
    db = connection.settings_dict
    env = {**os.environ,
           "DATABASE_URL": f"mysql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}/{db['NAME']}",
           "MEMORYBOARD_TASKS_BACKEND": "django_tasks_db.DatabaseBackend", "MEMORYBOARD_EMBEDDER": "hashing",
           "MEMORYBOARD_EXPIRY_SWEEP_MINUTES": str(1 / 60), "OPENAI_BASE_URL": ""}
    worker = subprocess.Popen([sys.executable, "manage.py", "tasks_worker", "--no-startup-delay", "--interval", "0.2",
                               "--worker-id", "sweeper", "--no-reload"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not LongTermMemory.objects.filter(pk=memory.pk, archived=True).exists():
            time.sleep(0.2)
    finally:
        worker.terminate()
        _out, err = worker.communicate(timeout=30)
    memory.refresh_from_db()
    assert memory.archived and memory.archived_reason == ArchivedReason.EXPIRED, err.decode()[-2000:]
