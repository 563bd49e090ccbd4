"""The embedded default (SQLite) under slow agent turns: do other writes wait for the model?

Run: ``.venv/bin/python benchmarks/slow_turns.py`` (``--seconds 10 --runs 1`` for a quick check). It

1. migrates a fresh SQLite file (the product's defaults: WAL, ``MEMORYBOARD_SQLITE_TIMEOUT``) and seeds
   ``--users`` users, each with a password, an API token and one memory item;
2. starts the fake OpenAI server (``tests/fakes/openai_server.py``) in its own process, every chat
   completion taking ``--delay`` seconds (a model that thinks), and gunicorn with the repository's
   ``gunicorn.conf.py`` (its defaults: threaded workers, the preloaded app);
3. keeps ``--turns`` agent turns in flight (``POST /api/v1/agents/chat/chat``, token auth) and, at the same
   time, one client repeating the other writes a person makes: sign in (the login form, CSRF), pause and
   resume an item, edit it (``/me/memories/<id>/…``);
4. reports per kind the p50/p95 latency and the status codes; ``--runs`` repeats 2-3 (alternating with a
   run without turns, the floor) and prints the median and spread of the p95, with the load average.

The target (issue: "the embedded default does not hold the write lock while the model thinks"): other
writes p95 < 1 s with 8 slow turns, no 500, and a busy database answered 503 with ``Retry-After``.
``tests/agent/test_slow_turns.py`` runs the same harness small.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.ports import free_port  # noqa: E402

FAKE_SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.fakes import openai_server
openai_server._Handler.disable_nagle_algorithm = True
server = openai_server.FakeOpenAI(chat_delay={delay!r}).start()
print(server.port, flush=True)
while True:
    time.sleep(5)
    server.requests.clear()
"""

SEED = """
import json
import django
django.setup()
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.store.upsert import memory_upsert_many
from memoryboard.ltm.search.embeddings import memory_embed_many
from django.contrib.auth.hashers import make_password
password = make_password("slow-turns-pw")
out = []
for i in range({users}):
    user = get_user_model().objects.create(username=f"slow-{{i:03d}}", password=password)
    namespace = build_namespace(agent_namespace="chat", user_id=str(user.pk))
    memory = memory_build(namespace=namespace, content=f"User {{i}} likes green tea", memory_type="PREFERENCE",
                          source="manual", agent_id="chat")
    memory_upsert_many([memory])
    memory_embed_many([memory])
    out.append({{"username": user.username, "password": "slow-turns-pw",
                "token": Token.objects.create(user=user).key, "memory_id": memory.pk}})
print(json.dumps(out))
"""


def server_env(database_path: pathlib.Path, fake_port: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env.update(
        DATABASE_URL=f"sqlite:///{database_path}",
        DJANGO_SETTINGS_MODULE="memoryboard.settings",
        MEMORYBOARD_DEBUG="0",
        MEMORYBOARD_SECRET_KEY="slow-turns-benchmark-only-" + "0123456789abcdef" * 3,
        MEMORYBOARD_ALLOWED_HOSTS="127.0.0.1,localhost",
        MEMORYBOARD_LOG_LEVEL="ERROR",
        OPENAI_BASE_URL=f"http://127.0.0.1:{fake_port}/v1",
        OPENAI_API_KEY="fake",
        OPENAI_MAX_RETRIES="0",
    )
    env.update(extra or {})
    return env


def prepare(directory: pathlib.Path, users: int, env: dict[str, str]) -> list[dict]:
    """Migrate ``directory/db.sqlite3`` and seed the users; returns their credentials."""
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env, check=True)
    done = subprocess.run([sys.executable, "-c", SEED.format(users=users)], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def start_fake(delay: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", FAKE_SERVER.format(root=str(ROOT), delay=delay)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    return proc, int(proc.stdout.readline())


def start_web(env: dict[str, str], port: int, timeout: float = 90.0) -> subprocess.Popen:
    """gunicorn with the repository's gunicorn.conf.py, once ``/api/v1/health/`` answers."""
    import httpx

    cmd = [str(pathlib.Path(sys.executable).with_name("gunicorn")), "-c", str(ROOT / "gunicorn.conf.py"),
           "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**env, "MEMORYBOARD_BIND": f"127.0.0.1:{port}"})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("gunicorn exited")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health/", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("gunicorn did not start")


_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _other_writes(base: str, user: dict, stop: threading.Event, samples: list) -> None:
    """Sign in, pause, resume, edit, again and again, recording ``(kind, status, seconds, retry_after)``."""
    import httpx

    def timed(kind, call):
        start = time.perf_counter()
        response = call()
        samples.append((kind, response.status_code, time.perf_counter() - start, response.headers.get("Retry-After")))
        return response

    edit = 0
    while not stop.is_set():
        with httpx.Client(base_url=base, timeout=60, follow_redirects=False) as client:
            page = client.get("/accounts/login/")
            token = _CSRF_INPUT.search(page.text).group(1)
            timed("login", lambda: client.post("/accounts/login/", data={
                "username": user["username"], "password": user["password"], "csrfmiddlewaretoken": token}))
            headers = {"X-CSRFToken": client.cookies.get("csrftoken", ""), "Referer": base + "/"}
            item = f"/me/memories/{user['memory_id']}"
            timed("pause", lambda: client.post(f"{item}/pause/", headers=headers))
            timed("resume", lambda: client.post(f"{item}/resume/", headers=headers))
            edit += 1
            timed("edit", lambda: client.post(f"{item}/edit/", headers=headers,
                                              data={"content": f"User likes green tea ({edit})"}))


def _turns(base: str, user: dict, stop: threading.Event, samples: list) -> None:
    import httpx

    headers = {"Authorization": f"Token {user['token']}"}
    with httpx.Client(base_url=base, timeout=120) as client:
        number = 0
        while not stop.is_set():
            number += 1
            start = time.perf_counter()
            response = client.post("/api/v1/agents/chat/chat", headers=headers,
                                    json={"message": f"What do I like to drink? ({number})"})
            samples.append(("chat", response.status_code, time.perf_counter() - start,
                            response.headers.get("Retry-After")))


def run_contention(port: int, users: list[dict], turns: int, seconds: float) -> list[tuple]:
    """``turns`` clients chatting and one client doing the other writes, for ``seconds``; the samples."""
    base = f"http://127.0.0.1:{port}"
    stop = threading.Event()
    samples: list[tuple] = []
    threads = [threading.Thread(target=_turns, args=(base, users[i % len(users)], stop, samples))
               for i in range(turns)]
    threads.append(threading.Thread(target=_other_writes, args=(base, users[-1], stop, samples)))
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(180)
    return samples


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def summarize(samples: list[tuple]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for kind in sorted({s[0] for s in samples}):
        rows = [s for s in samples if s[0] == kind]
        times = [s[2] for s in rows]
        statuses: dict[str, int] = {}
        for row in rows:
            statuses[str(row[1])] = statuses.get(str(row[1]), 0) + 1
        out[kind] = {"n": len(rows), "p50": percentile(times, 0.5), "p95": percentile(times, 0.95),
                     "statuses": statuses,
                     "503_without_retry_after": sum(1 for r in rows if r[1] == 503 and not r[3])}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=8, help="agent turns in flight")
    parser.add_argument("--delay", type=float, default=2.0, help="seconds each model call takes")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of one run")
    parser.add_argument("--runs", type=int, default=5, help="runs with turns, each alternated with a floor run")
    parser.add_argument("--users", type=int, default=9)
    args = parser.parse_args()

    results = {"turns": [], "floor": []}
    with tempfile.TemporaryDirectory() as directory:
        fake, fake_port = start_fake(args.delay)
        port = free_port()
        env = server_env(pathlib.Path(directory) / "db.sqlite3", fake_port)
        web = None
        try:
            users = prepare(pathlib.Path(directory), args.users, env)
            web = start_web(env, port)
            for run in range(args.runs):
                for label, turns in (("turns", args.turns), ("floor", 0)):
                    load = os.getloadavg()[0]
                    summary = summarize(run_contention(port, users, turns, args.seconds))
                    results[label].append({"load": load, **summary})
                    print(f"run {run + 1} {label:5s} load {load:4.1f} " + "  ".join(
                        f"{kind} p50 {s['p50'] * 1000:.0f} ms p95 {s['p95'] * 1000:.0f} ms {s['statuses']}"
                        for kind, s in summary.items()), flush=True)
        finally:
            for proc in (web, fake):
                if proc is not None:
                    proc.terminate()
                    proc.wait(30)
    print(f"\n{args.turns} turns in flight, model {args.delay:g} s, {args.runs} runs of {args.seconds:g} s, "
          f"alternated with runs without turns; p95 of the other writes (ms), median [min-max]:")
    for label in ("turns", "floor"):
        for kind in ("login", "pause", "resume", "edit", "chat"):
            values = [r[kind]["p95"] * 1000 for r in results[label] if kind in r]
            if values:
                print(f"  {label:5s} {kind:6s} {statistics.median(values):7.0f} [{min(values):.0f}-{max(values):.0f}]")
    loads = [r["load"] for rs in results.values() for r in rs]
    print(f"load average (1 min) at the start of the runs: {min(loads):.1f}-{max(loads):.1f}")
    bad = {kind: s["statuses"] for rs in results.values() for r in rs for kind, s in r.items()
           if kind != "load" and any(code.startswith("5") and code != "503" for code in s["statuses"])}
    print("5xx other than 503:", bad or "none")


if __name__ == "__main__":
    main()
