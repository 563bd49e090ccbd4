"""Load test of the REST API under gunicorn with MariaDB: memory search and list vs the framework floor.

Run: ``.venv/bin/python benchmarks/load.py`` (``--seconds 5`` for a quick run, ``--no-write`` to only
print). It

1. creates its own MariaDB database (``--database-url``, default ``mysql://root@127.0.0.1:3306/mb_api_load``),
   migrates it and seeds ``--users`` end users with ``--memories`` items each (once; reused afterwards);
2. starts gunicorn on 127.0.0.1 with the repository's ``gunicorn.conf.py`` at the product's defaults (DEBUG off,
   offline models; ``--workers`` overrides ``MEMORYBOARD_WEB_WORKERS``);
3. for each concurrency in ``--concurrency`` runs each endpoint for ``--seconds``: a bounded load generator
   of N threads, each with its own HTTP connection, each request signed with a random user's token:

   * ``floor``: ``GET /api/v1/ping/``, a trivial DRF view (token authentication + a JSON answer, no query);
   * ``list``: ``GET /api/v1/memories/?limit=20``, the caller's items, newest first;
   * ``search``: ``GET /api/v1/memories/search/?q=...&k=10``, semantic search over the caller's 200 items;

   each endpoint's time is split into ``--rounds`` slices run in turn (floor, list, search, floor, ...),
   so a change in the machine's speed during the run weighs on the floor and the endpoints alike;

4. reports requests/s, p50 and p99 latency and errors, and writes the table into ``benchmarks/README.md``
   under ``## Load``. Targets: zero errors; search >= half the floor's throughput at each concurrency.
"""

from __future__ import annotations

import argparse
import http.client
import os
import pathlib
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.ports import free_port  # noqa: E402

README = ROOT / "benchmarks" / "README.md"
HEADING = "## Load"
QUERIES = ["Java backend developer", "prefers code examples", "喜欢喝茶", "lives in Berlin", "uses PostgreSQL",
           "morning routine", "想学习日语", "deadline next week", "vegetarian food", "runs marathons"]
SUBJECTS = ["Java", "Python", "Go", "Rust", "PostgreSQL", "MariaDB", "tea", "coffee", "Berlin", "Shanghai",
            "日语", "跑步", "马拉松", "素食", "code examples", "short answers", "dark mode", "vim", "emacs", "Kubernetes"]
TEMPLATES = ["The user works with {s} every day.", "Prefers {s} over the alternatives.", "用户喜欢{s}。",
             "Asked about {s} last week.", "Wants to learn more about {s}.", "Mentioned {s} in passing, item {n}."]
TYPES = ["FACT", "PREFERENCE", "PROCEDURE", "EPISODE"]


def _env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="memoryboard.settings",
        MEMORYBOARD_DEBUG="0",
        MEMORYBOARD_SECRET_KEY="load-benchmark-only-" + "0123456789abcdef" * 3,
        MEMORYBOARD_ALLOWED_HOSTS="127.0.0.1,localhost",
        OPENAI_BASE_URL="",
    )
    return env


def prepare_database(database_url: str, users: int, memories: int) -> list[str]:
    """Create, migrate and seed the benchmark database; returns the users' API tokens."""
    import MySQLdb

    parsed = urllib.parse.urlparse(database_url)
    name = parsed.path.lstrip("/")
    conn = MySQLdb.connect(host=parsed.hostname or "127.0.0.1", port=parsed.port or 3306,
                           user=parsed.username or "root", password=parsed.password or "")
    conn.cursor().execute(f"CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    conn.close()
    env = _env(database_url)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    os.environ.update(env)
    import django

    django.setup()
    return seed(users, memories)


def seed(users: int, memories: int) -> list[str]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from memoryboard.ltm.search.embeddings import memory_embed_many
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.items import memory_build
    from memoryboard.ltm.store.upsert import memory_upsert_many
    from memoryboard.models import LongTermMemory

    user_model = get_user_model()
    rng = random.Random(7)
    tokens = []
    for i in range(users):
        user, created = user_model.objects.get_or_create(username=f"load-user-{i:03d}")
        if created:
            user.set_unusable_password()
            user.save()
        tokens.append(Token.objects.get_or_create(user=user)[0].key)
        namespace = build_namespace(agent_namespace="chat", user_id=str(user.pk))
        have = LongTermMemory.objects.filter(namespace=namespace.as_text()).count()
        if have >= memories:
            continue
        batch = [
            memory_build(
                namespace=namespace,
                content=rng.choice(TEMPLATES).format(s=rng.choice(SUBJECTS), n=n),
                memory_type=rng.choice(TYPES),
                source=rng.choice(["auto_extract", "agent_tool"]),
                agent_id="chat",
            )
            for n in range(memories - have)
        ]
        memory_upsert_many(batch)
        memory_embed_many(batch)
    return tokens


def start_server(database_url: str, port: int, workers: int | None = None, *, env: dict[str, str] | None = None,
                 timeout: float = 30.0) -> subprocess.Popen:
    """gunicorn with the repository's ``gunicorn.conf.py`` on 127.0.0.1:``port`` (``workers``: its
    ``MEMORYBOARD_WEB_WORKERS``, else the file's default) with the benchmark's environment (plus ``env``),
    once it answers (within ``timeout`` seconds: the master loads the offline embedder)."""
    cmd = [str(pathlib.Path(sys.executable).with_name("gunicorn")), "-c", str(ROOT / "gunicorn.conf.py")]
    server_env = {**_env(database_url), **(env or {}), "MEMORYBOARD_BIND": f"127.0.0.1:{port}"}
    if workers:
        server_env["MEMORYBOARD_WEB_WORKERS"] = str(workers)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=server_env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/v1/health/")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("gunicorn did not start")


def run_load(port: int, path_for, tokens: list[str], concurrency: int, seconds: float) -> dict:
    """``concurrency`` threads GET ``path_for(rng)`` with a random user's token for ``seconds``."""

    def request_for(rng):
        headers = {"Authorization": f"Token {rng.choice(tokens)}", "Accept": "application/json"}
        return port, "GET", path_for(rng), None, headers

    return run_requests(request_for, concurrency, seconds)


def run_requests(request_for, concurrency: int, seconds: float) -> dict:
    """``concurrency`` threads send ``request_for(rng)`` = ``(port, method, path, body, headers)`` for
    ``seconds``, each over its own connections; returns the latencies and errors."""
    latencies: list[list[float]] = [[] for _ in range(concurrency)]
    errors = [0] * concurrency
    samples: list[str] = []
    start = threading.Barrier(concurrency + 1)
    stop_at = [0.0]

    def worker(index: int) -> None:
        rng = random.Random(index)
        conns: dict[int, http.client.HTTPConnection] = {}
        start.wait()
        mine = latencies[index]
        while time.perf_counter() < stop_at[0]:
            port, method, path, body, headers = request_for(rng)
            conn = conns.get(port) or conns.setdefault(port, http.client.HTTPConnection("127.0.0.1", port, timeout=30))
            began = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                if response.status != 200:
                    errors[index] += 1
                    if len(samples) < 3:
                        samples.append(f"{response.status} {data[:200]!r}")
                if response.getheader("Connection", "").lower() == "close":
                    conns.pop(port).close()
            except (OSError, http.client.HTTPException) as exc:
                errors[index] += 1
                if len(samples) < 3:
                    samples.append(repr(exc))
                conns.pop(port, conn).close()
                continue
            mine.append(time.perf_counter() - began)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    stop_at[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    start.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    return {
        "latencies": [x for per in latencies for x in per],
        "errors": sum(errors),
        "elapsed": elapsed,
        "samples": samples,
    }


def summarize(slices: list[dict]) -> dict:
    """Requests/s, p50/p99 latency and errors of one endpoint over its interleaved slices."""
    flat = sorted(x for part in slices for x in part["latencies"])
    count = len(flat)
    elapsed = sum(part["elapsed"] for part in slices)
    return {
        "requests": count,
        "errors": sum(part["errors"] for part in slices),
        "rps": count / elapsed if elapsed else 0.0,
        "p50": statistics.median(flat) * 1000 if flat else float("nan"),
        "p99": flat[min(count - 1, int(count * 0.99))] * 1000 if flat else float("nan"),
        "samples": [sample for part in slices for sample in part["samples"]][:3],
    }


ENDPOINTS = {
    "floor": lambda rng: "/api/v1/ping/",
    "list": lambda rng: "/api/v1/memories/?limit=20",
    "search": lambda rng: "/api/v1/memories/search/?" + urllib.parse.urlencode({"q": rng.choice(QUERIES), "k": 10}),
}


def table(results: list[tuple[int, str, dict]]) -> str:
    lines = ["| concurrency | endpoint | requests | req/s | p50 ms | p99 ms | errors | × floor req/s |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    floors = {c: r["rps"] for c, name, r in results if name == "floor"}
    for concurrency, name, r in results:
        ratio = r["rps"] / floors[concurrency] if floors.get(concurrency) else float("nan")
        lines.append(f"| {concurrency} | {name} | {r['requests']:,} | {r['rps']:.1f} | {r['p50']:.1f} | "
                     f"{r['p99']:.1f} | {r['errors']} | {ratio:.2f} |")
    return "\n".join(lines)


def write_readme(section: str) -> None:
    """Replace the "## Load" section of benchmarks/README.md (``benchmarks.sections``, as the others)."""
    from benchmarks.sections import write_readme_section

    write_readme_section(README, HEADING, f"{HEADING}\n\n{section.strip()}\n\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="duration of each endpoint x concurrency run")
    parser.add_argument("--concurrency", default="1,4,16", help="comma-separated client thread counts")
    parser.add_argument("--database-url", default="mysql://root@127.0.0.1:3306/mb_api_load")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--memories", type=int, default=200, help="items per user")
    parser.add_argument("--workers", type=int, default=None,
                        help="gunicorn workers (MEMORYBOARD_WEB_WORKERS; default: gunicorn.conf.py's)")
    parser.add_argument("--port", type=int, default=None, help="default: a free port (tests.ports)")
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds per endpoint before measuring, so every worker has met every user")
    parser.add_argument("--rounds", type=int, default=6,
                        help="each endpoint's time is split into this many slices, run in turn with the others'")
    parser.add_argument("--no-write", action="store_true", help="print only; do not update benchmarks/README.md")
    args = parser.parse_args()
    levels = [int(x) for x in args.concurrency.split(",") if x.strip()]

    tokens = prepare_database(args.database_url, args.users, args.memories)
    args.port = args.port or free_port()
    server = start_server(args.database_url, args.port, args.workers)
    results: list[tuple[int, str, dict]] = []
    try:
        for name, path_for in ENDPOINTS.items():  # warm every worker's connection and caches
            run_load(args.port, path_for, tokens, max(levels), args.warmup)
        for concurrency in levels:
            slices: dict[str, list[dict]] = {name: [] for name in ENDPOINTS}
            for _round in range(args.rounds):  # interleaved, so a drift of the machine's speed hits all alike
                for name, path_for in ENDPOINTS.items():
                    slices[name].append(run_load(args.port, path_for, tokens, concurrency, args.seconds / args.rounds))
            for name in ENDPOINTS:
                result = summarize(slices[name])
                results.append((concurrency, name, result))
                print(f"c={concurrency:<3} {name:<6} {result['rps']:8.1f} req/s  p50 {result['p50']:6.1f} ms  "
                      f"p99 {result['p99']:6.1f} ms  errors {result['errors']} {result['samples'][:1]}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)

    floors = {c: r["rps"] for c, name, r in results if name == "floor"}
    misses = [f"c={c} {name}: {r['errors']} errors" for c, name, r in results if r["errors"]]
    misses += [f"c={c} search: {r['rps'] / floors[c]:.2f}× the floor's throughput (target ≥ 0.5×)"
               for c, name, r in results if name == "search" and r["rps"] < 0.5 * floors[c]]
    load = os.getloadavg()[0]
    section = f"""
`.venv/bin/python benchmarks/load.py` — the REST API under gunicorn (gunicorn.conf.py, workers {args.workers or 'default'}, DEBUG off,
offline embedder) on 127.0.0.1 with MariaDB, seeded with {args.users} end users × {args.memories} items
({args.users * args.memories:,} rows in `ah_long_term_memory`, their vectors in `memoryboard_embedding`).
A Python load generator (threads, one `http.client` connection each, reopened after every response since
gunicorn's sync workers close it; token authentication with a random seeded user per request) runs each endpoint for {args.seconds:g} s per concurrency level (in {args.rounds} slices,
taken in turn with the other endpoints' so that a drift of the machine's speed hits all alike), on the same
{os.cpu_count()} CPUs as the server (load average {load:.1f} when the run ended), so absolute numbers are modest;
the ratio to the floor measured in the same run is what to compare.

- **floor**: `GET /api/v1/ping/`, a trivial DRF view: DRF's own `TokenAuthentication` (one ORM query) and a
  JSON answer. The API's other views authenticate with `memoryboard.shared.authentication.TokenAuthentication`
  (one hand-written query that also reads the caller's role groups).
- **list**: `GET /api/v1/memories/?limit=20`: the caller's items, newest first (scoped queryset, no `COUNT(*)`).
- **search**: `GET /api/v1/memories/search/?q=…&k=10`: embed the query, cosine top-10 over the caller's
  {args.memories} active items, serialize them.
- Targets: zero errors; search ≥ 0.5× the floor's requests/s.

{table(results)}

{"All targets met." if not misses else "Targets missed in this run:" + chr(10) + chr(10).join("- " + m for m in misses)}

What an end user's search request does (`MemoryViewSet.search` → `ltm.search.retrieval.memory_search`),
three queries in all:

1. token authentication: the user and their role groups in one hand-written query;
2. the candidates: the ids of the user's unarchived items (index `idx_ltm_ns_archived`) with the count
   of their pause rules and their vector generation; while the generation is unchanged the process
   already knows their vectors (`ltm.search.vector_cache`), and for the same ids as last time, their matrix;
   otherwise the same query also joins each item's vector row id and checksum, and the vectors come
   from the checksum-keyed cache or one more query;
3. the 10 best items with their pause flags, built with the ORM's converters.

The query is embedded once, scored with one matrix product, and the 10 items are written as JSON
without a DRF serializer instance. Before issue 6's work on search (commit `aa5aa49`, same benchmark
with 60 s per endpoint run one after the other) search stood at 0.29× / 0.33× / 0.29× the floor; five
queries per request (token, groups, pause rules, candidates with every vector, the top rows).
"""
    print(section)
    if not args.no_write:
        write_readme(section)
    return 0 if not misses else 1


if __name__ == "__main__":
    raise SystemExit(main())
