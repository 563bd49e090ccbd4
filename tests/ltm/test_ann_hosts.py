"""The staff-search index on many hosts: each follows the database's change log; erased, deleted and archived
vectors are gone from every host's files; a broken file is a slower search, not an outage; searches never
wait for a writer.

A "host" is an index directory (``MEMORYBOARD_ANN_DIR``) with this process's state of it cleared: what
a web host or a worker host keeps on its own disk."""

from __future__ import annotations

import threading
import time
import zlib
from contextlib import contextmanager
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection

from memoryboard.ltm.search import ann, retrieval
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.models import MemoryEmbedding
from tests.ports import free_port

MODEL = "hashing-ngram-384"


@pytest.fixture
def hosts(settings, tmp_path, monkeypatch):
    """``hosts("a")``: a context in which this process is host "a" (its own index directory)."""
    monkeypatch.setattr(retrieval, "EXACT_MAX", 0)  # every staff scope here is "large"

    @contextmanager
    def host(name: str):
        old = settings.MEMORYBOARD_ANN_DIR
        settings.MEMORYBOARD_ANN_DIR = str(tmp_path / name)
        ann._views.clear()
        try:
            yield tmp_path / name
        finally:
            settings.MEMORYBOARD_ANN_DIR = old
            ann._views.clear()

    ann._views.clear()
    yield host
    ann._views.clear()


def _plant(memory) -> dict[str, bytes]:
    """Give the item a vector nobody else has; its bytes as the index (int8) and as f16/f32 would store them.

    The same vector in every run (seeded by the content; ``hash()`` of the id changes with the id and with
    each process's hash seed): a random vector reaches a cosine of 0.15 with the query "piano", a match
    of the minimum relevance that a staff search rightly returns, about once in 600 draws."""
    seed = zlib.crc32(memory.content.encode())
    vector = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    vector /= np.linalg.norm(vector)
    MemoryEmbedding.objects.filter(memory_id=memory.pk).update(vector=vector.tobytes())
    return {"f32": vector.tobytes(), "f16": vector.astype(np.float16).tobytes()}


def _int8(memory) -> bytes:
    index, _position = ann._snapshot(MODEL)
    key = MemoryEmbedding.objects.get(memory_id=memory.pk).pk
    return index.get(key, dtype="i8").tobytes()


def _files_holding(directories: list[Path], patterns: dict[str, bytes]) -> list[str]:
    found = []
    for directory in directories:
        for path in directory.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                found += [f"{path.name}: {kind}" for kind, pattern in patterns.items() if pattern in data]
    return found


def _staff_finds(support_user, query: str) -> list[str]:
    found = memory_rank(queryset=memory_queryset_for(support_user), query=query, k=5)
    return [r.memory.pk for r in found.results]


@pytest.mark.django_db
def test_an_erase_is_gone_from_the_files_of_every_host(hosts, support_user, alice, bob, make_memory):
    from memoryboard.ltm.people.user_data import user_data_erase

    secret = make_memory(alice, "User hides a unique secret phrase")
    other = make_memory(bob, "User plays the piano")
    patterns = _plant(secret)
    with hosts("a") as a:
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        patterns["i8"] = _int8(secret)
    with hosts("b") as b:
        assert _staff_finds(support_user, "unique secret phrase")[0] == secret.pk  # b built its own, by itself
        assert patterns["i8"] in ann.index_path(MODEL).read_bytes()
    with hosts("a"):
        user_data_erase(user_id=str(alice.pk), actor=alice)
        assert _files_holding([a], patterns) == []  # this host: before the erase returned
    with hosts("b"):
        assert secret.pk not in _staff_finds(support_user, "unique secret phrase")
        assert _staff_finds(support_user, "piano") == [other.pk]
    assert _files_holding([b], patterns) == []
    assert _files_holding([a], patterns) == []


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["delete", "archive"])
def test_deleted_and_archived_vectors_leave_the_files_when_the_hosts_follow(
        hosts, how, support_user, alice, make_memory, django_capture_on_commit_callbacks):
    from memoryboard.ltm.store.items import memory_archive, memory_delete_for_user

    item = make_memory(alice, "User hides a unique secret phrase")
    make_memory(alice, "User plays the piano")
    patterns = _plant(item)
    with hosts("a") as a:
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        patterns["i8"] = _int8(item)
    with hosts("b") as b:
        assert ann.ann_follow(model_name=MODEL) > 0
    with hosts("a"), django_capture_on_commit_callbacks(execute=True):  # the worker task runs on host a
        if how == "delete":
            memory_delete_for_user(memory=item, actor=alice)
        else:
            memory_archive(memory=item, actor=support_user)
    assert _files_holding([a], patterns) == [] and patterns["i8"] in (b / f"{MODEL}.usearch").read_bytes()
    with hosts("b"):
        assert ann.ann_follow(model_name=MODEL) == 1  # what a search or the follower thread runs
    assert _files_holding([a, b], patterns) == []


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # the graph's bytes overwritten, same size: usearch would open it and crash the process searching it
        start = len(data) * 3 // 4
        path.write_bytes(data[:start] + bytes(np.random.default_rng(1).integers(0, 256, len(data) - start,
                                                                                dtype=np.uint8)))


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["corrupt", "empty", "truncated"])
def test_a_broken_file_is_a_slower_search_then_rebuilt(hosts, how, settings, monkeypatch, caplog, support_user,
                                                       alice, make_memory):
    items = [make_memory(alice, f"User plays instrument number {i}") for i in range(4)]
    with hosts("a") as a:
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        assert memory_rank(queryset=memory_queryset_for(support_user), query="instrument", k=3).index == "hnsw"
        ann._views.clear()  # a process that has not opened this file yet
        _damage(ann.index_path(MODEL), how)
        settings.MEMORYBOARD_ANN_FOLLOW_SECONDS = 10  # the follower is a thread: the search does not wait for it
        kicked = []
        monkeypatch.setattr(ann, "_kick", lambda model_name, dim=None, now=False: kicked.append(model_name))
        found = memory_rank(queryset=memory_queryset_for(support_user), query="instrument number 2", k=3)
        assert found.index == "exact" and found.results[0].memory.pk == items[2].pk
        assert "unreadable" in caplog.text and kicked == [MODEL]
        assert not ann.index_path(MODEL).exists() and ann.broken_path(MODEL).exists()  # moved aside

        assert ann.ann_follow(model_name=MODEL) == 4  # what the follower does: rebuild
        found = memory_rank(queryset=memory_queryset_for(support_user), query="instrument number 2", k=3)
        assert found.index == "hnsw" and found.results[0].memory.pk == items[2].pk
        assert not ann.broken_path(MODEL).exists() and sorted(p.name for p in a.iterdir()) == [
            f"{MODEL}.lock", f"{MODEL}.usearch", f"{MODEL}.usearch.json"]


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["corrupt", "empty", "truncated"])
def test_an_erase_never_depends_on_the_file_being_readable(hosts, how, alice, bob, make_memory):
    from memoryboard.ltm.people.user_data import user_data_erase
    from memoryboard.models import LongTermMemory

    secret = make_memory(alice, "User hides a unique secret phrase")
    make_memory(bob, "User plays the piano")
    patterns = _plant(secret)
    with hosts("a") as a:
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        patterns["i8"] = _int8(secret)
        _damage(ann.index_path(MODEL), how)
        user_data_erase(user_id=str(alice.pk), actor=alice)
        assert not LongTermMemory.objects.filter(pk=secret.pk).exists()
        assert _files_holding([a], patterns) == []
        assert ann.ann_follow(model_name=MODEL) == 1  # rebuilt from what is left


@pytest.mark.django_db
def test_searches_and_erases_do_not_wait_behind_a_rebuild(hosts, monkeypatch, support_user, alice, bob,
                                                          make_memory):
    from memoryboard.ltm.people.user_data import user_data_erase

    secret = make_memory(alice, "User hides a unique secret phrase")
    piano = make_memory(bob, "User plays the piano")
    patterns = _plant(secret)
    monkeypatch.setattr(ann, "ERASE_WAIT", 0.5)
    with hosts("a") as a:
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        patterns["i8"] = _int8(secret)
        holding, release = threading.Event(), threading.Event()

        def rebuild_running():  # holds this host's writer lock as a rebuild does for its whole run
            with ann._writer(MODEL):
                holding.set()
                release.wait(30)

        writer = threading.Thread(target=rebuild_running)
        writer.start()
        try:
            holding.wait(5)
            started = time.monotonic()
            assert _staff_finds(support_user, "piano") == [piano.pk]
            assert time.monotonic() - started < 2  # the last good file: no wait for the writer (held 30 s)
            started = time.monotonic()
            user_data_erase(user_id=str(alice.pk), actor=alice)
            assert time.monotonic() - started < 5  # bounded (ERASE_WAIT): the writer applies the logged removal
            started = time.monotonic()
            assert secret.pk not in _staff_finds(support_user, "unique secret phrase")
            assert time.monotonic() - started < 2
        finally:
            release.set()
            writer.join()
        assert ann.ann_follow(model_name=MODEL) == 1  # the writer's next run: the erase's removal
        assert _files_holding([a], patterns) == []


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_two_web_hosts_and_a_worker_on_one_mariadb(hosts, settings, monkeypatch, support_user, alice, bob,
                                                   make_memory):
    """Two web hosts (a, b) and a worker host (w): a write on a is found by a staff search on b within
    seconds, before b's file has it and after; an erase on a is gone from the searches and the files of
    all three."""
    from memoryboard.ltm.people.user_data import user_data_erase
    from memoryboard.ltm.search.tasks import ann_update_task

    if connection.vendor != "mysql":
        pytest.skip("hosts share one MariaDB/MySQL database (real commits)")
    for i in range(30):
        make_memory(alice if i % 2 else bob, f"User collects stamps from country {i}")
    with hosts("a") as a:
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    with hosts("w") as w:
        assert ann_update_task.call(model_name=MODEL) == 0  # a worker host serving no search keeps no index
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())  # unless one is built there
    with hosts("b") as b:
        assert _staff_finds(support_user, "stamps country 7")  # builds its own too

    settings.MEMORYBOARD_ANN_FOLLOW_SECONDS = 10  # web hosts follow on a thread: kept from running here
    monkeypatch.setattr(ann, "_kick", lambda model_name, dim=None, now=False: None)
    with hosts("a"):
        clocks = make_memory(bob, "User restores antique pendulum clocks")  # committed; a's task runs on a
        patterns = _plant(clocks)
        ann_update_task.call(model_name=MODEL)
    written = time.monotonic()
    with hosts("b"):
        assert _staff_finds(support_user, "antique pendulum clocks")[0] == clocks.pk  # from the log, exactly
        assert time.monotonic() - written < 3
        assert ann.ann_follow(model_name=MODEL) == 1  # then b's follower takes it (its vector as stored now) in
        index, _position = ann._snapshot(MODEL)
        key = MemoryEmbedding.objects.get(memory_id=clocks.pk).pk
        assert key in index
        patterns["i8"] = index.get(key, dtype="i8").tobytes()
        assert _staff_finds(support_user, "antique pendulum clocks")[0] == clocks.pk
    with hosts("w"):
        ann_update_task.call(model_name=MODEL)

    with hosts("a"):
        user_data_erase(user_id=str(bob.pk), actor=bob)
    with hosts("b"):
        assert _staff_finds(support_user, "antique pendulum clocks") == []  # gone before b follows
        assert _files_holding([b, w], patterns) != []  # b and w have not followed yet
        ann.ann_follow(model_name=MODEL)
    with hosts("w"):
        ann_update_task.call(model_name=MODEL)
    assert _files_holding([a, b, w], patterns) == []
    with hosts("b"):
        assert all(m.startswith("User collects stamps") for m in [
            r.memory.content for r in memory_rank(queryset=memory_queryset_for(support_user), query="stamps",
                                                  k=5).results])



HOST_SCRIPT = """
import json, sys, time
import django
django.setup()
from django.contrib.auth import get_user_model
from memoryboard.ltm.search import retrieval
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.store.selectors import memory_queryset_for

retrieval.EXACT_MAX = 0
staff = get_user_model().objects.get(pk=int(sys.argv[1]))
query, wanted, started = sys.argv[2], sys.argv[3] == "found", time.monotonic()
while True:
    found = memory_rank(queryset=memory_queryset_for(staff), query=query, k=3)
    ids = [r.memory.pk for r in found.results]
    if bool(ids) == wanted or time.monotonic() - started > 10:
        break
    time.sleep(0.2)
waited = time.monotonic() - started
time.sleep(2)  # the follower thread's turns (MEMORYBOARD_ANN_FOLLOW_SECONDS=0.5)
print(json.dumps({"ids": ids, "index": found.index, "waited": waited}))
"""


def _host_process(directory: Path, staff, query: str, wanted: str) -> dict:
    import json
    import os
    import subprocess
    import sys

    db = connection.settings_dict
    env = dict(os.environ, DATABASE_URL=f"mysql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}/"
               f"{db['NAME']}", MEMORYBOARD_ANN_DIR=str(directory), MEMORYBOARD_ANN_FOLLOW_SECONDS="0.5",
               MEMORYBOARD_EMBEDDER="hashing", DJANGO_SETTINGS_MODULE="memoryboard.settings")
    done = subprocess.run([sys.executable, "-c", HOST_SCRIPT, str(staff.pk), query, wanted], env=env,
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_a_web_host_in_its_own_process_follows_the_log_with_its_thread(hosts, support_user, alice, bob,
                                                                       make_memory):
    """Host b is another process, its follower thread on: it builds its own index, finds a write committed
    by host a, takes it into its file; an erase on a leaves b's search and b's file."""
    from memoryboard.ltm.people.user_data import user_data_erase

    if connection.vendor != "mysql":
        pytest.skip("another process needs the same MariaDB/MySQL database")
    for i in range(10):
        make_memory(alice, f"User collects stamps from country {i}")
    with hosts("a"):
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
    with hosts("b") as b:
        pass
    assert _host_process(b, support_user, "stamps country", "found")["ids"]
    assert (b / f"{MODEL}.usearch").exists()  # built by b's follower thread by itself

    with hosts("a"):
        clocks = make_memory(bob, "User restores antique pendulum clocks")
        patterns = _plant(clocks)
    seen = _host_process(b, support_user, "antique pendulum clocks", "found")
    assert seen["ids"][:1] == [clocks.pk] and seen["index"] == "hnsw" and seen["waited"] < 3
    with hosts("b"):
        index, _position = ann._snapshot(MODEL)
        key = MemoryEmbedding.objects.get(memory_id=clocks.pk).pk
        assert key in index  # b's thread applied the log to b's file
        patterns["i8"] = index.get(key, dtype="i8").tobytes()

    with hosts("a"):
        user_data_erase(user_id=str(bob.pk), actor=bob)
    gone = _host_process(b, support_user, "antique pendulum clocks", "gone")
    assert gone["ids"] == [] and gone["waited"] < 3
    assert _files_holding([b], patterns) == []  # b's thread scrubbed its file


@pytest.mark.django_db
def test_an_index_that_fails_in_any_way_is_an_exact_search(hosts, monkeypatch, caplog, support_user,
                                                                      alice, make_memory):
    item = make_memory(alice, "User plays the violin")
    with hosts("a"):
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        ann._views.clear()

        def unwritable(*args, **kwargs):
            raise PermissionError("read-only file system")

        monkeypatch.setattr(ann, "_digest", unwritable)
        found = memory_rank(queryset=memory_queryset_for(support_user), query="violin", k=3)
        assert found.index == "exact" and [r.memory.pk for r in found.results] == [item.pk]
        assert "exact search" in caplog.text


def _api(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["corrupt", "empty", "truncated"])
def test_over_the_api_a_broken_file_neither_fails_staff_searches_nor_a_users_erase(
        hosts, how, settings, monkeypatch, support_user, alice, bob, make_memory):
    from memoryboard.models import LongTermMemory

    secret = make_memory(alice, "User hides a unique secret phrase")
    piano = make_memory(bob, "User plays the piano")
    with hosts("a"):
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        ann._views.clear()
        _damage(ann.index_path(MODEL), how)
        settings.MEMORYBOARD_ANN_FOLLOW_SECONDS = 10
        monkeypatch.setattr(ann, "_kick", lambda model_name, dim=None, now=False: None)  # the follower has not run yet
        for _ in range(2):
            response = _api(support_user).get("/api/v1/memories/search/?q=piano&k=3")
            assert response.status_code == 200 and response.json()[0]["id"] == piano.pk
        response = _api(alice).post("/api/v1/me/data/erase/", {"confirm": True}, format="json")
        assert response.status_code == 200 and not LongTermMemory.objects.filter(pk=secret.pk).exists()


def _get(port: int, path: str, token: str | None = None) -> tuple[int, bytes]:
    import http.client

    connection_ = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection_.request("GET", path, headers={"Authorization": f"Token {token}"} if token else {})
        response = connection_.getresponse()
        return response.status, response.read()
    finally:
        connection_.close()


@contextmanager
def _gunicorn_host(directory: Path, follow_seconds: float, log: Path):
    """A web host in its own gunicorn (the repository's gunicorn.conf.py: preloaded app, one worker) on the
    test database, with its own index directory; yields its port once its health check answers."""
    import os
    import subprocess
    import sys

    db = connection.settings_dict
    env = dict(os.environ, DATABASE_URL=f"mysql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}/"
               f"{db['NAME']}", MEMORYBOARD_ANN_DIR=str(directory), MEMORYBOARD_ANN_FOLLOW_SECONDS=str(follow_seconds),
               MEMORYBOARD_EMBEDDER="hashing", MEMORYBOARD_WEB_WORKERS="1", MEMORYBOARD_WEB_THREADS="2",
               MEMORYBOARD_ALLOWED_HOSTS="127.0.0.1", MEMORYBOARD_DEBUG="0", OPENAI_BASE_URL="")
    env.pop("MEMORYBOARD_SHARED_CACHE_URL", None)
    port = free_port()
    root = Path(__file__).resolve().parents[2]
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "memoryboard.wsgi",
                                    "--bind", f"127.0.0.1:{port}"], cwd=root, env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if _get(port, "/api/v1/health/")[0] == 200:
                        break
                except OSError:
                    pass
                assert time.monotonic() < deadline and process.poll() is None, log.read_text()
                time.sleep(0.1)
            yield port
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_an_erase_leaves_an_idle_host_and_a_host_started_after_it(hosts, tmp_path, support_user, alice, bob,
                                                                  make_memory):
    """Two web hosts on one MariaDB, each a gunicorn with gunicorn.conf.py. Host 2's index is built; host 1
    erases alice; host 2 stays idle (health checks only: no write, no search): alice's vectors are gone from
    its file within MEMORYBOARD_ANN_FOLLOW_SECONDS. Host 3, whose file was built before the erase, starts
    after it: its first staff search does not return them, and its file no longer holds them by then."""
    import json

    from rest_framework.authtoken.models import Token

    from memoryboard.ltm.people.user_data import user_data_erase

    if connection.vendor != "mysql":
        pytest.skip("hosts share one MariaDB/MySQL database (real commits)")
    secrets = [make_memory(alice, f"User hides unique secret phrase number {i}") for i in range(6)]
    for i in range(6):
        make_memory(bob, f"User collects stamps from country {i}")
    patterns = {}
    for secret in secrets:
        patterns.update({f"{secret.pk}:{kind}": data for kind, data in _plant(secret).items()})
    with hosts("1"):
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        for secret in secrets:
            patterns[f"{secret.pk}:i8"] = _int8(secret)
    for name in ("2", "3"):  # their files, built before the erase
        with hosts(name) as directory:
            call_command("ann_rebuild", "--no-progress", stdout=StringIO())
            assert len(_files_holding([directory], patterns)) == len(secrets)
    two, three = tmp_path / "2", tmp_path / "3"
    token = Token.objects.create(user=support_user).key
    follow = 2.0

    with _gunicorn_host(two, follow, tmp_path / "host2.log") as port:
        time.sleep(follow + 1)  # host 2 is up and has followed the log at least once
        assert len(_files_holding([two], patterns)) == len(secrets)
        with hosts("1") as one:
            user_data_erase(user_id=str(alice.pk), actor=alice)
            assert _files_holding([one], patterns) == []
        erased = time.monotonic()
        while _files_holding([two], patterns) and time.monotonic() - erased < follow + 5:
            assert _get(port, "/api/v1/health/")[0] == 200  # health checks only
            time.sleep(0.2)
        scrubbed = time.monotonic() - erased
        assert _files_holding([two], patterns) == []
        assert scrubbed < follow + 1.5, scrubbed  # within the follow interval (and the time to write a file)

    assert len(_files_holding([three], patterns)) == len(secrets)  # host 3 was down during the erase
    with _gunicorn_host(three, 60.0, tmp_path / "host3.log") as port:  # its next turn would be a minute away
        status, body = _get(port, "/api/v1/memories/search/?q=unique%20secret%20phrase&k=10", token=token)
        assert status == 200, body
        assert not {item["id"] for item in json.loads(body)} & {s.pk for s in secrets}
        assert _files_holding([three], patterns) == []  # applied before it answered its first staff search


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_a_task_worker_host_follows_the_log_from_its_start(hosts, tmp_path, alice, bob, make_memory):
    """A worker host with an index file (``manage.py tasks_worker``, django-tasks-db) and no task to run: an
    erase elsewhere leaves its file within MEMORYBOARD_ANN_FOLLOW_SECONDS, by its follower thread."""
    import os
    import subprocess
    import sys

    from memoryboard.ltm.people.user_data import user_data_erase

    if connection.vendor != "mysql":
        pytest.skip("hosts share one MariaDB/MySQL database (real commits)")
    secret = make_memory(alice, "User hides a unique secret phrase")
    make_memory(bob, "User plays the piano")
    patterns = _plant(secret)
    with hosts("w") as worker_dir:
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        patterns["i8"] = _int8(secret)
    db = connection.settings_dict
    env = dict(os.environ, DATABASE_URL=f"mysql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}/"
               f"{db['NAME']}", MEMORYBOARD_ANN_DIR=str(worker_dir), MEMORYBOARD_ANN_FOLLOW_SECONDS="1",
               MEMORYBOARD_EMBEDDER="hashing", MEMORYBOARD_TASKS_BACKEND="django_tasks_db.DatabaseBackend",
               OPENAI_BASE_URL="")
    worker = subprocess.Popen([sys.executable, "manage.py", "tasks_worker", "--no-startup-delay", "--interval", "1",
                               "--worker-id", "follower", "--no-reload", "--queue-name", "nothing-queued-here"],
                              cwd=Path(__file__).resolve().parents[2], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        time.sleep(8)  # started (Django and the embedder loaded)
        assert worker.poll() is None and patterns["i8"] in (worker_dir / f"{MODEL}.usearch").read_bytes()
        with hosts("a"):
            user_data_erase(user_id=str(alice.pk), actor=alice)
        erased = time.monotonic()
        while _files_holding([worker_dir], patterns) and time.monotonic() - erased < 10:
            time.sleep(0.2)
        assert _files_holding([worker_dir], patterns) == [], worker.stderr.read1().decode()[-2000:]
        assert time.monotonic() - erased < 1 + 1.5
    finally:
        worker.terminate()
        worker.wait(timeout=30)
