"""Tasks survive their workers: a task left RUNNING by a dead worker is retried (idempotently) or failed,
and support sees failed extractions. The last test kills a real ``tasks_worker`` process (MariaDB: the
worker processes need a database they can share with the test)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from memoryboard.task_recovery import EXTRACT_TASK_PATH
from memoryboard.models import LongTermMemory, WorkerHeartbeat
from memoryboard.task_recovery import MAX_ATTEMPTS, WORKER_LOST_PATH, tasks_recover, worker_heartbeat
from memoryboard.ltm.write.tasks import extract_memories_task

ROOT = Path(__file__).resolve().parents[2]
TURN = [{"role": "user", "content": "I am a glider pilot"}]


def _task(user_id: str, *, status=TaskResultStatus.READY, workers=(), started=None, path=EXTRACT_TASK_PATH,
          turn_at=None) -> DBTaskResult:
    return DBTaskResult.objects.create(
        args_kwargs={"args": [], "kwargs": {"agent_id": "chat", "user_id": user_id, "conversation_id": "c-glide",
                                            "conversation": TURN, "turn_at": turn_at or timezone.now().isoformat()}},
        task_path=path, backend_name="default", queue_name="default", run_after=timezone.now(),
        exception_class_path="", traceback="", priority=0, status=status, worker_ids=list(workers),
        started_at=started,
    )


@pytest.mark.django_db
def test_recovery_retries_lost_tasks_fails_them_when_out_of_runs_and_leaves_live_ones(settings):
    settings.MEMORYBOARD_WORKER_LOST_SECONDS = 60
    settings.MEMORYBOARD_TASK_STALE_SECONDS = 900
    now = timezone.now()
    worker_heartbeat(worker_id="alive", now=now - timedelta(seconds=5))
    worker_heartbeat(worker_id="dead", now=now - timedelta(seconds=120))
    live = _task("1", status=TaskResultStatus.RUNNING, workers=["alive"], started=now - timedelta(hours=1))
    lost = _task("1", status=TaskResultStatus.RUNNING, workers=["dead"], started=now - timedelta(minutes=3))
    spent = _task("1", status=TaskResultStatus.RUNNING, workers=["dead"] * MAX_ATTEMPTS, started=now)
    other = _task("1", status=TaskResultStatus.RUNNING, workers=["dead"], started=now, path="some.other.task")
    # Run by a plain db_worker (no heartbeat): judged by its age.
    old_plain = _task("1", status=TaskResultStatus.RUNNING, workers=["plain"], started=now - timedelta(minutes=20))
    new_plain = _task("1", status=TaskResultStatus.RUNNING, workers=["plain"], started=now - timedelta(minutes=2))

    summary = tasks_recover(now=now)

    assert set(summary.retried) == {str(lost.pk), str(old_plain.pk)}
    assert set(summary.failed) == {str(spent.pk), str(other.pk)}
    status = dict(DBTaskResult.objects.values_list("pk", "status"))
    assert status[live.pk] == status[new_plain.pk] == TaskResultStatus.RUNNING
    assert status[lost.pk] == TaskResultStatus.READY and DBTaskResult.objects.ready().filter(pk=lost.pk).exists()
    failed = DBTaskResult.objects.get(pk=spent.pk)
    assert failed.exception_class_path == WORKER_LOST_PATH and failed.finished_at == now
    assert tasks_recover(now=now).retried == []  # nothing twice


@pytest.mark.django_db
def test_a_retried_extraction_writes_its_items_once(alice, monkeypatch):
    from memoryboard.agents_config import parse_agents_config

    config = parse_agents_config({"agent": {"agents": {"chat": {"long-term-memory": {"enabled": True,
                                                                                     "namespace": "chat"}}}}})
    monkeypatch.setattr("memoryboard.ltm.write.extraction.get_agents_config", lambda: config)
    kwargs = {"agent_id": "chat", "user_id": str(alice.pk), "conversation_id": "c-glide", "conversation": TURN,
              "turn_at": timezone.now().isoformat()}
    first = extract_memories_task.call(**kwargs)
    assert first and LongTermMemory.objects.count() == len(first)
    assert extract_memories_task.call(**kwargs) == []  # the run after a lost one finds the turn saved
    assert LongTermMemory.objects.count() == len(first)


@pytest.mark.django_db
def test_support_sees_failed_extractions_on_the_user_page(login, support_user, alice, bob):
    failed = _task(str(alice.pk), status=TaskResultStatus.FAILED, workers=["w1", "w2", "w3"])
    DBTaskResult.objects.filter(pk=failed.pk).update(exception_class_path=WORKER_LOST_PATH, finished_at=timezone.now())
    _task(str(bob.pk), status=TaskResultStatus.FAILED)
    page = login(support_user).get(reverse("person", args=[alice.pk])).content.decode()
    assert 'id="person-failed-extractions"' in page and "the worker stopped while running it" in page
    assert "c-glide" in page
    bobs = login(support_user).get(reverse("person", args=[bob.pk]))
    assert [f["runs"] for f in bobs.context["failed_extractions"]] == [0]


def _worker(worker_id: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "tasks_worker", "--no-startup-delay", "--interval", "0.2",
         "--worker-id", worker_id, "--no-reload"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def _wait(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_s_extraction_is_run_again_by_another_worker(openai_settings, alice, tmp_path):
    if connection.vendor != "mysql":
        pytest.skip("worker processes share the test database only on MariaDB/MySQL (SQLite's is in memory)")
    db = connection.settings_dict
    agents = tmp_path / "agents.yaml"
    agents.write_text("agent:\n  agents:\n    chat:\n      long-term-memory: {enabled: true, namespace: chat}\n")
    env = {**os.environ,
           "DATABASE_URL": f"mysql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}/{db['NAME']}",
           "MEMORYBOARD_TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
           "OPENAI_BASE_URL": openai_settings.base_url, "OPENAI_API_KEY": "test-key", "OPENAI_MAX_RETRIES": "0",
           "OPENAI_TIMEOUT_SECONDS": "60", "MEMORYBOARD_EMBEDDER": "hashing", "MEMORYBOARD_AGENTS_FILE": str(agents),
           "MEMORYBOARD_WORKER_HEARTBEAT_SECONDS": "1", "MEMORYBOARD_WORKER_LOST_SECONDS": "3",
           "MEMORYBOARD_TASK_RECOVER_SECONDS": "1", "MEMORYBOARD_SECRET_KEY": os.environ["MEMORYBOARD_SECRET_KEY"]}
    reply = json.dumps([{"type": "FACT", "content": "User flies gliders"}])
    openai_settings.push_reply(content=reply)
    openai_settings.push_delay("chat/completions", 60)  # the first worker waits for the model ...
    openai_settings.push_reply(content=reply)
    task = _task(str(alice.pk))

    first = _worker("worker-one", env)
    try:
        _wait(lambda: DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.RUNNING
              and openai_settings.chat_requests(), 60, "the first worker to start the task")
        first.send_signal(signal.SIGKILL)  # ... and dies there
        first.wait(10)
        time.sleep(1)
        assert DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.RUNNING  # what the package leaves

        second = _worker("worker-two", env)
        try:
            _wait(lambda: DBTaskResult.objects.get(pk=task.pk).status in (TaskResultStatus.SUCCESSFUL,
                                                                            TaskResultStatus.FAILED),
                  60, "the second worker to recover and run the task")
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(20)
    finally:
        if first.poll() is None:
            first.kill()
    done = DBTaskResult.objects.get(pk=task.pk)
    assert done.status == TaskResultStatus.SUCCESSFUL, done.traceback
    assert done.worker_ids == ["worker-one", "worker-two"]
    assert [m.content for m in LongTermMemory.objects.all()] == ["User flies gliders"]
    assert WorkerHeartbeat.objects.filter(worker_id="worker-two").exists()
