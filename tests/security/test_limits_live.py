"""The shared limits against a real gunicorn of 3 workers on 127.0.0.1 (its own SQLite file, or its own
MariaDB database when DATABASE_URL names one, migrated by manage.py like a fresh clone): sign-in throttling counted across the workers and not fooled by a
forged X-Forwarded-For; one user's 12 concurrent 60 MB strategy bodies do not starve /api/v1/health/."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 3
BIG_BODY_MB = float(os.environ.get("MEMORYBOARD_TEST_BIG_BODY_MB", "60"))
SETUP = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
alice = get_user_model().objects.create_user("alice", password="pw-alice")
print(json.dumps({"token": Token.objects.create(user=alice).key}))
"""


@pytest.fixture(scope="module")
def live_database_url(tmp_path_factory):
    """A database of the server's own: a fresh SQLite file, or on MySQL/MariaDB (DATABASE_URL) a database
    ``<name>_gunicorn_live`` made for the module and dropped after it."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("mysql"):
        yield f"sqlite:///{tmp_path_factory.mktemp('gunicorn-db') / 'db.sqlite3'}"
        return
    import dj_database_url
    import MySQLdb

    parts = dj_database_url.parse(url)
    name = f"{parts['NAME']}_gunicorn_live"
    server = MySQLdb.connect(host=parts["HOST"] or "127.0.0.1", port=int(parts["PORT"] or 3306),
                             user=parts["USER"], password=parts["PASSWORD"] or "")
    cursor = server.cursor()
    cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
    cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    yield url.rsplit("/", 1)[0] + "/" + name
    cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
    server.close()


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory, live_database_url):
    directory = tmp_path_factory.mktemp("gunicorn")
    env = {**os.environ, "DATABASE_URL": live_database_url, "OPENAI_BASE_URL": "",
           "MEMORYBOARD_DEBUG": "0", "MEMORYBOARD_SECRET_KEY": "live-test-" + "k" * 40,
           "MEMORYBOARD_ALLOWED_HOSTS": "127.0.0.1", "MEMORYBOARD_EMBEDDER": "hashing"}
    for name in ("MEMORYBOARD_SHARED_CACHE_URL", "MEMORYBOARD_NUM_PROXIES"):
        env.pop(name, None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    data = json.loads(subprocess.run([sys.executable, "manage.py", "shell", "-c", SETUP], cwd=ROOT, env=env,
                                     check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
    port = free_port()
    log = open(directory / "gunicorn.log", "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memoryboard.wsgi", "--workers", str(WORKERS), "--bind", f"127.0.0.1:{port}",
         "--timeout", "120"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            if _request(port, "GET", "/api/v1/health/")[0] == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline and process.poll() is None, (directory / "gunicorn.log").read_text()
        time.sleep(0.2)
    yield {"port": port, "token": data["token"]}
    process.terminate()
    process.wait(timeout=30)
    log.close()


def _request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None, timeout=60):
    """One request on its own connection (so the kernel hands it to any of the workers)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_sign_in_throttling_is_shared_by_the_workers_and_ignores_x_forwarded_for(gunicorn):
    statuses = []
    for n in range(3 * WORKERS + 3):
        status, _ = _request(gunicorn["port"], "POST", "/api/v1/auth/token/",
                             json.dumps({"username": "alice", "password": "wrong"}).encode(),
                             {"Content-Type": "application/json", "X-Forwarded-For": f"203.0.113.{n}"})
        statuses.append(status)
    # MEMORYBOARD_LOGIN_RATE (10/min) and the failure counter (10): the 11th attempt is refused, on
    # whichever worker it lands, whatever address the header claims.
    assert statuses == [400] * 10 + [429] * 2, statuses


def test_one_users_big_strategy_bodies_do_not_starve_the_health_check(gunicorn):
    """Starved means waiting behind the big bodies: a starved health check waits about as long as a body
    takes to be served, or longer; one that is not is answered in a small part of that time, and while the
    bodies are served. Both are measured against the flood itself (how long its bodies take on this machine
    now), not in seconds or checks per second: the suite runs on a loaded machine, where the one body
    admitted may be served in under half a second (no room for five checks) or in two."""
    content = "x" * 10_000
    count = int(BIG_BODY_MB * 1_000_000 / (len(content) + 40))
    body = json.dumps({"messages": [{"role": "user", "content": content}] * count,
                       "params": {"keep_first": 1, "keep_last": 1}}).encode()
    headers = {"Content-Type": "application/json", "Authorization": "Token " + gunicorn["token"]}
    # Warm every worker up first (each imports the strategy code on its first such request).
    small = json.dumps({"messages": [{"role": "user", "content": "hi"}], "params": {"keep_first": 1, "keep_last": 1}})
    for _ in range(4 * WORKERS):
        assert _request(gunicorn["port"], "POST", "/api/v1/strategies/context/trim/apply", small.encode(), headers)[0] == 200
    flood: list[tuple[float, float, object]] = []  # (sent, answered, status or exception name) per big body
    probes: list[tuple[float, float, int]] = []  # (asked, answered, status) per health check
    done = threading.Event()

    def send() -> None:
        started = time.monotonic()
        try:
            outcome = _request(gunicorn["port"], "POST", "/api/v1/strategies/context/trim/apply", body, headers,
                               timeout=120)[0]
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            outcome = type(exc).__name__  # the server answered 429 and closed before the body was sent
        flood.append((started, time.monotonic(), outcome))

    def probe() -> None:
        while not done.is_set():
            started = time.monotonic()
            status, _ = _request(gunicorn["port"], "GET", "/api/v1/health/", timeout=30)
            probes.append((started, time.monotonic(), status))
            time.sleep(0.05)

    prober = threading.Thread(target=probe)
    prober.start()
    senders = [threading.Thread(target=send) for _ in range(12)]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join()
    done.set()
    prober.join()
    outcomes = [outcome for _sent, _answered, outcome in flood]
    served = [(sent, answered) for sent, answered, outcome in flood if outcome == 200]
    latencies = [answered - asked for asked, answered, _status in probes]
    print(f"outcomes={outcomes} served={[round(b - a, 2) for a, b in served]} probes={len(probes)}",
          [round(x, 2) for x in latencies])
    assert len(body) > BIG_BODY_MB * 0.9e6
    assert served, outcomes
    assert all(outcome in (200, 429) or isinstance(outcome, str) for outcome in outcomes), outcomes
    assert len(served) <= 6, outcomes  # the byte budget (64 MB) admits one 60 MB body at a time
    assert [status for _asked, _answered, status in probes] == [200] * len(probes), probes
    # While the first body admitted was being served, a health check was asked and answered.
    first_sent, first_answered = min(served, key=lambda window: window[1])
    assert any(first_sent <= asked and answered <= first_answered for asked, answered, _status in probes), (
        probes, served)
    # None waited for a body: the slowest took less than half the time the quickest body took to be served.
    quickest = min(answered - sent for sent, answered in served)
    assert max(latencies) < quickest / 2, (max(latencies), quickest)
