"""Benchmark of long-term memory retrieval (issue 4; the access-log row is issue 7's target).

Run::

    .venv/bin/python benchmarks/retrieval.py            # both parts, writes the table into benchmarks/README.md
    .venv/bin/python benchmarks/retrieval.py --no-1m    # only the database part

Part 1, one user's top-10 including the database read: a fresh SQLite file (in a temporary directory,
never the development database) with 50 users × 200 items of the ``chat`` agent (10,000 items, 384-d
vectors of the offline embedder), and ``memory_retrieve`` for one user, timed with and without the
access log (the UPDATE of access_count/last_accessed_at plus the bulk INSERT into the access log).
The query is embedded once beforehand by a caching wrapper, so the rows measure retrieval, not the
offline embedder.

Part 2, 1,000,000 vectors of 384 dimensions (float32, unit rows): ``memoryboard.ltm.retrieval.top_k``
against the floor (a bare ``matrix @ query`` + ``argpartition`` of the top 10) and FAISS ``IndexFlatIP``
(``faiss-cpu``, requirements-bench.txt), in the same run, round-robin, median of repeats.

Targets: one user's top-10 under 5 ms on SQLite; the 1M search within 1.5× of the floor; the access log
under 10% of one user's top-10 time.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

README = ROOT / "benchmarks" / "README.md"
HEADING = "## Retrieval"
USERS = 50
ITEMS_PER_USER = 200
DIM = 384
N_1M = 1_000_000
K = 10
WORDS = (
    "user prefers python java backend developer likes concise answers code examples lives in berlin shanghai "
    "works at startup tea coffee morning meetings running guitar piano kubernetes postgres redis travel"
).split() + ["用户", "偏好", "喜欢", "代码", "示例", "后端", "开发者", "数据库", "旅行", "周末", "咖啡", "跑步"]


def _cpu_ms(fn) -> float:
    """CPU time of this process for one call: what the call costs, whatever else the machine runs."""
    start = time.process_time()
    fn()
    return (time.process_time() - start) * 1000


def _median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


class CachedQueryEmbedder:
    """The offline embedder with the benchmark query's vector cached (so rows time retrieval only)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.is_offline = True
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts):
        key = "\x00".join(texts)
        if key not in self._cache:
            self._cache[key] = self.inner.embed(texts)
        return self._cache[key]


def _setup_django(db_path: pathlib.Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "memoryboard.settings"
    os.environ.pop("OPENAI_BASE_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _seed() -> None:
    from memoryboard.llm.embeddings import HashingEmbedder
    from memoryboard.ltm.embeddings import memory_embed_many
    from memoryboard.ltm.namespaces import build_namespace
    from memoryboard.ltm.services import memory_build
    from memoryboard.ltm.store import memory_upsert_many

    rng = np.random.default_rng(7)
    embedder = HashingEmbedder(DIM)
    types = ["FACT", "PREFERENCE", "PROCEDURE", "EPISODE"]
    for user in range(1, USERS + 1):
        ns = build_namespace(agent_namespace="chat", user_id=str(user))
        items = [
            memory_build(
                namespace=ns,
                content=" ".join(rng.choice(WORDS, size=8)),
                memory_type=types[i % 4],
                source="auto_extract",
                agent_id="chat",
            )
            for i in range(ITEMS_PER_USER)
        ]
        memory_upsert_many(items)
        memory_embed_many(items, embedder=embedder)


def bench_database(repeats: int) -> list[tuple[str, float]]:
    from django.db import connection
    from django.utils import timezone

    from memoryboard.llm.embeddings import HashingEmbedder
    from memoryboard.ltm.access_log import AccessRecord, flush_access_log, write_access_records
    from memoryboard.ltm.namespaces import build_namespace
    from memoryboard.ltm.retrieval import memory_retrieve

    embedder = CachedQueryEmbedder(HashingEmbedder(DIM))
    ns = build_namespace(agent_namespace="chat", user_id="7")
    query = "用户喜欢 python backend 代码示例"

    def without_log():
        return memory_retrieve(namespace=ns, query=query, k=K, embedder=embedder, log_access=False)

    def with_log():
        return memory_retrieve(namespace=ns, query=query, k=K, embedder=embedder, agent_id="chat",
                               conversation_id="bench")

    items = without_log()
    assert len(items) == K and len(with_log()) == K
    connection.ensure_connection()
    plain, logged = [], []
    for i in range(repeats):
        # Alternate which goes first: the first call after a pause is measurably faster on a busy machine.
        # The background write happens between requests, not during the next one: flush after each.
        if i % 2:
            logged.append(_median_ms(with_log, 1))
            flush_access_log()
            plain.append(_median_ms(without_log, 1))
        else:
            plain.append(_median_ms(without_log, 1))
            logged.append(_median_ms(with_log, 1))
            flush_access_log()

    from memoryboard.ltm.retrieval import memory_log_access

    def log_only():
        memory_log_access(items, agent_id="chat", conversation_id="bench", kind="retrieval")

    request_path = []
    for _ in range(repeats):
        request_path.append(_median_ms(log_only, 1))
        flush_access_log()

    record = AccessRecord(tuple(i.memory.pk for i in items), tuple(i.score for i in items), "chat", "bench",
                          "retrieval", timezone.now())
    inline = _median_ms(lambda: write_access_records([record]), max(20, repeats // 5))
    batch = 100
    batched = []
    for _ in range(5):
        start = time.perf_counter()
        write_access_records([record] * batch)
        batched.append((time.perf_counter() - start) * 1000 / batch)
    cpu = [_cpu_ms(without_log) for _ in range(repeats)]
    return [
        ("one user's top-10 over 200 items incl. DB read, without access log", statistics.median(plain)),
        ("the same, CPU time of the process (independent of other load)", statistics.median(cpu)),
        ("one user's top-10 over 200 items incl. DB read, with access log (request path)", statistics.median(logged)),
        ("access log on the request path alone (memory_log_access: update the objects, queue the write)",
         statistics.median(request_path)),
        ("access log write of one retrieval, inline (own transaction; background thread cost)", inline),
        (f"access log write of one retrieval, batched {batch} per transaction", statistics.median(batched)),
    ]


def bench_1m(repeats: int) -> list[tuple[str, float]]:
    from memoryboard.ltm.retrieval import top_k

    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((N_1M, DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[123] + 0.1 * rng.standard_normal(DIM, dtype=np.float32)
    query /= np.linalg.norm(query)

    def floor():
        scores = matrix @ query
        return np.argpartition(-scores, K)[:K]

    def ours():
        return top_k(matrix, query, K)[0]

    contenders = {"floor: matrix @ query + argpartition": floor, "memoryboard top_k (sorted top-10)": ours}
    try:
        import faiss

        index = faiss.IndexFlatIP(DIM)
        index.add(matrix)
        q2 = query.reshape(1, -1)
        contenders["FAISS IndexFlatIP"] = lambda: index.search(q2, K)[1][0]
    except ImportError:  # pragma: no cover - faiss is a benchmark-only dependency
        print("faiss-cpu not installed: pip install -r requirements-bench.txt", file=sys.stderr)

    assert set(ours().tolist()) == set(floor().tolist())
    if "FAISS IndexFlatIP" in contenders:
        assert set(contenders["FAISS IndexFlatIP"]().tolist()) == set(floor().tolist())
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            times[name].append(_median_ms(fn, 1))
    return [(f"1,000,000 × {DIM} float32, top-10: {name}", statistics.median(t)) for name, t in times.items()]


def _table(rows: list[tuple[str, float]]) -> str:
    lines = ["| case | median ms |", "|---|---:|"]
    lines += [f"| {name} | {ms:.3f} |" for name, ms in rows]
    return "\n".join(lines)


def _verdict(rows: dict[str, float]) -> list[str]:
    out = []
    user = rows.get("one user's top-10 over 200 items incl. DB read, without access log")
    logged = rows.get("one user's top-10 over 200 items incl. DB read, with access log (request path)")
    cpu = rows.get("the same, CPU time of the process (independent of other load)")
    if user is not None:
        out.append(f"- one user's top-10 incl. DB read: {user:.2f} ms wall (target < 5 ms: {'met' if user < 5 else 'MISSED'})"
                   + (f", {cpu:.2f} ms CPU" if cpu is not None else ""))
    alone = next((v for k, v in rows.items() if k.startswith("access log on the request path")), None)
    if user is not None and logged is not None:
        cost = (logged - user) / user * 100
        out.append(f"- access log, end to end: {cost:+.1f}% of one user's top-10 time (difference of two noisy medians)")
    if user is not None and alone is not None:
        cost = alone / user * 100
        out.append(f"- access log on the request path, measured alone: {cost:.1f}% of one user's top-10 time "
                   f"(target < 10%: {'met' if cost < 10 else 'MISSED'})")
    floor = next((v for k, v in rows.items() if "floor" in k), None)
    ours = next((v for k, v in rows.items() if "memoryboard top_k" in k), None)
    faiss_ms = next((v for k, v in rows.items() if "FAISS" in k), None)
    if floor and ours:
        out.append(f"- 1M search: {ours / floor:.2f}× the floor (target ≤ 1.5×: {'met' if ours / floor <= 1.5 else 'MISSED'})")
    if floor and faiss_ms:
        out.append(f"- FAISS IndexFlatIP: {faiss_ms / floor:.2f}× the floor")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-1m", action="store_true", help="skip the 1,000,000-vector part")
    parser.add_argument("--repeats", type=int, default=200, help="repeats of the database part")
    parser.add_argument("--repeats-1m", type=int, default=15, help="repeats of the 1M part")
    parser.add_argument("--no-readme", action="store_true", help="print only, do not edit benchmarks/README.md")
    args = parser.parse_args()

    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        _setup_django(pathlib.Path(tmp) / "bench.sqlite3")
        _seed()
        rows += bench_database(args.repeats)
        from django.db import connections

        connections.close_all()
    if not args.no_1m:
        rows += bench_1m(args.repeats_1m)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    header = (
        f"{HEADING}\n\n"
        "`.venv/bin/python benchmarks/retrieval.py` — long-term memory retrieval. Part 1: `memory_retrieve` for one user "
        f"on a fresh SQLite file holding {USERS} users × {ITEMS_PER_USER} items with {DIM}-d vectors, including the "
        "database read (one query for ids and vectors, a LEFT JOIN of items and vectors; one for the top-10 rows), "
        "with and without the access log (one UPDATE of access_count/last_accessed_at, one bulk INSERT into the "
        "access log, in one transaction). Part 2: 1,000,000 unit vectors of 384 float32 dimensions, "
        "`memoryboard.ltm.retrieval.top_k` against a bare `matrix @ query` + `argpartition` (the floor) and FAISS "
        "`IndexFlatIP`, round-robin in the same run. Medians in milliseconds "
        f"(Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f} at the end).\n\n"
    )
    notes = (
        "\n\nNotes. The access log's database writes run on a background thread (see docs/decisions.md), so the "
        "request path pays only for updating the returned objects and queuing; the write rows show what that "
        "thread spends per retrieval. `top_k` is the floor's matrix product plus an `argpartition` and a sort of "
        "the 10 winners, so it sits at the floor within noise; FAISS `IndexFlatIP` answers one query at a time "
        "with its own blocked kernel and thread pool, which on this 2-CPU machine is slower than numpy's BLAS "
        "product (FAISS pays off for batches of queries, not needed here). The absolute times move with the "
        "machine's load; the ratios are what to compare.\n"
    )
    section = header + _table(rows) + "\n\n" + "\n".join(_verdict(dict(rows))) + notes
    print(section)
    if not args.no_readme:
        from benchmarks.sections import write_readme_section

        write_readme_section(README, HEADING, section)


if __name__ == "__main__":
    main()
