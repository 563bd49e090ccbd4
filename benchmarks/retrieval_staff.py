"""Benchmark: staff search across every user's items on MariaDB through the API, with the HNSW index (issue 13).

Run (MariaDB on 127.0.0.1, database ``i13bench``, created if missing and kept between runs)::

    .venv/bin/python benchmarks/retrieval_staff.py --n 1000000     # seeds what is missing, then measures

1. Seeds ``--n`` items (200 per user) with random clustered 512-d unit vectors stored under the default
   model's name (embedding a million texts would measure the model, not search), by plain INSERTs.
2. ``ann_rebuild`` (the command's code path: reads every vector from the database, builds, writes the
   file): vectors per second.
3. ``GET /api/v1/memories/search/?q=…&k=10`` as support staff through Django's test client (routing,
   DRF, the view, the one search path, serialization; no network), p50 over the queries. The query
   embedding is replaced by a vector near a stored one (perturbed), so that the search has true
   neighbours to find; everything after the embedding is the real path.
4. Recall@10: the API's results against exact search with the same scoring over every vector (numpy,
   in this process), on the same queries.

``--settings 1000/1000,100/200`` measures more (candidates asked of the index / ef_search) pairs on the
same queries, in turn per query; ``--query-noise 0.02,0.077`` adds query sets farther from the items
(0.077: cosine ~0.5 with the item it was drawn from, like a paraphrase with the default model);
``--skip-build`` reuses the index file of an earlier run (``var/bench-ann/DATABASE/``); ``--readme``
writes the section "Staff search" of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time
import uuid

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DIM = 512
PER_USER = 200
MODEL = "use-multilingual-v3"
TYPES = ["FACT", "PREFERENCE", "PROCEDURE", "EPISODE"]
BATCH = 2_000
README = ROOT / "benchmarks" / "README.md"
HEADING = "## Staff search"


def _vectors(rng, n: int, centres: np.ndarray) -> np.ndarray:
    m = centres[rng.integers(0, len(centres), n)] + 0.6 * rng.standard_normal((n, DIM), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--database", default="i13bench")
    parser.add_argument("--skip-build", action="store_true", help="keep the index file of an earlier run")
    parser.add_argument("--settings", default="",
                        help="more candidates/ef_search pairs to measure on the same queries, e.g. 1000/1000,100/200")
    parser.add_argument("--query-noise", default="0.02",
                        help="noise levels of the query vectors, e.g. 0.02,0.077 (each its own --queries queries)")
    parser.add_argument("--readme", action="store_true", help="write the section of benchmarks/README.md")
    parser.add_argument("--ann-dir", default="", help="index directory (default var/bench-ann/DATABASE)")
    args = parser.parse_args()

    import MySQLdb

    MySQLdb.connect(host="127.0.0.1", user="root").cursor().execute(
        f"CREATE DATABASE IF NOT EXISTS {args.database} CHARACTER SET utf8mb4")
    os.environ["DATABASE_URL"] = f"mysql://root@127.0.0.1:3306/{args.database}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "memoryboard.settings"
    os.environ["MEMORYBOARD_EMBEDDER"] = "use"
    # One index directory per database (a smaller database of one's own must not replace the 1M index).
    os.environ["MEMORYBOARD_ANN_DIR"] = args.ann_dir or str(ROOT / "var" / "bench-ann" / args.database)
    os.environ.pop("OPENAI_BASE_URL", None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from memoryboard.ltm.search import ranking
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.models import LongTermMemory, vector_checksum

    rng = np.random.default_rng(11)
    centres = rng.standard_normal((2000, DIM), dtype=np.float32)
    have = LongTermMemory.objects.count()
    start = time.perf_counter()
    now = "2026-12-03 12:00:00.000000"
    while have < args.n:
        n = min(BATCH, args.n - have)
        vectors = _vectors(rng, n, centres)
        items, embeddings = [], []
        for i in range(n):
            index = have + i
            pk = uuid.uuid4().hex
            ns = build_namespace(agent_namespace="chat", user_id=f"b{index // PER_USER}").as_text()
            value = '{"content": "note %d about %s", "type": "%s", "agentId": "chat", "source": "auto_extract"}' % (
                index, ["tea", "java", "travel", "music"][index % 4], TYPES[index % 4])
            items.append((pk, ns, pk, value, now, now, 0, 1.0, 0))
            blob = vectors[i].tobytes()
            embeddings.append((pk, MODEL, DIM, blob, vector_checksum(blob), now))
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO ah_long_term_memory (id, namespace, key_name, value_json, created_at, updated_at, "
                "access_count, relevance_score, archived) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", items)
            cursor.executemany(
                "INSERT INTO memoryboard_embedding (memory_id, model_name, dim, vector, checksum, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s)", embeddings)
        have += n
        if have % 50_000 < BATCH:
            print(f"  seeded {have:,} ({have / (time.perf_counter() - start):,.0f}/s)", flush=True)

    from memoryboard.ltm.search.ann import ann_rebuild

    build_load = [os.getloadavg()[0]]
    t, cpu = time.perf_counter(), time.process_time()
    if args.skip_build:
        built, build_s, build_cpu = 0, float("nan"), float("nan")
    else:
        built = ann_rebuild(model_name=MODEL, dim=DIM, threads=0)
        build_s, build_cpu = time.perf_counter() - t, time.process_time() - cpu
    build_load.append(os.getloadavg()[0])
    print(f"index: {built:,} vectors in {build_s:.0f} s = {built / build_s:,.0f}/s (database read included), "
          f"{built / build_cpu:,.0f} per CPU second; load average {build_load[0]:.1f} → {build_load[1]:.1f}", flush=True)

    # Every stored vector, for the exact baseline and for choosing query vectors.
    ids, matrix, types = [], [], []
    with connection.cursor() as cursor:
        cursor.execute("SELECT e.memory_id, e.vector, m.value_json FROM memoryboard_embedding e "
                       "JOIN ah_long_term_memory m ON m.id = e.memory_id WHERE e.model_name = %s", [MODEL])
        for pk, blob, value in cursor.fetchall():
            ids.append(pk)
            matrix.append(np.frombuffer(blob, dtype=np.float32))
            types.append(value.split('"type": "')[1].split('"')[0])
    matrix = np.vstack(matrix)
    weights = ranking.type_weights(types)

    # Per noise level, ``--queries`` query vectors: a stored vector plus Gaussian noise of that standard
    # deviation per dimension (0.02: cosine ~0.91 with it, a near-duplicate; 0.077: ~0.50, what a
    # paraphrase reaches with the default model, farther from every item and harder for the graph).
    noises = [float(x) for x in args.query_noise.split(",")]
    queries, noise_of = {}, {}
    for noise in noises:
        for i in range(args.queries):
            q = matrix[rng.integers(0, len(ids))] + noise * rng.standard_normal(DIM, dtype=np.float32)
            text = f"benchmark query {i} at {noise}"
            queries[text], noise_of[text] = (q / np.linalg.norm(q)).astype(np.float32), noise

    from memoryboard.llm import factory

    real = factory.get_embedder()

    class QueryVectors:  # the default model's name and dimension, vectors chosen above for the queries
        name, dim, is_offline = real.name, real.dim, True

        def embed(self, texts):
            return np.vstack([queries[t] for t in texts])

    factory._cache["embedder"] = QueryVectors()

    from django.contrib.auth import get_user_model
    from django.test import Client

    from memoryboard.roles import ensure_role_groups
    from django.contrib.auth.models import Group

    ensure_role_groups()
    staff, _created = get_user_model().objects.get_or_create(username="bench-support", defaults={"is_staff": True})
    staff.groups.add(Group.objects.get(name="support"))
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(staff)

    from memoryboard.ltm.search import ann, retrieval

    # Each setting (candidates asked of the index / HNSW ef_search) serves every query, in turn per
    # query, so that the machine's load drifts over all of them alike; the code's own setting first.
    settings_ = [(retrieval.ANN_CANDIDATES, ann.EXPANSION_SEARCH)]
    for spec in filter(None, args.settings.split(",")):
        count, ef = (int(x) for x in spec.split("/"))
        if (count, ef) not in settings_:
            settings_.append((count, ef))
    default = settings_[0]
    stats = {(noise, setting): {"times": [], "cpu": [], "recalls": []} for noise in noises for setting in settings_}

    def use(setting):
        retrieval.ANN_CANDIDATES, ann.EXPANSION_SEARCH = setting
        for _signature, _position_mtime, index, _position in ann._views.values():
            if index is not None:
                index.expansion_search = setting[1]

    ann._snapshot(MODEL)  # the file's CRC checked and mapped once, as each process does per version of the file
    load_start = os.getloadavg()[0]
    for n, (text, q) in enumerate(queries.items()):
        scores = ranking.score(cosine=matrix @ q, keyword=np.zeros(len(ids), np.float32), types=weights,
                               relevance_scores=np.ones(len(ids), np.float32), model_name=MODEL)
        eligible = np.flatnonzero(scores.relevance >= ranking.MIN_RELEVANCE)
        truth = {ids[i] for i in eligible[np.argsort(-scores.final[eligible])[:10]]}
        for setting in settings_[n % len(settings_):] + settings_[: n % len(settings_)]:
            use(setting)
            st = stats[noise_of[text], setting]
            t, cpu = time.perf_counter(), time.process_time()
            response = client.get("/api/v1/memories/search/", {"q": text, "k": 10})
            st["times"].append((time.perf_counter() - t) * 1000)
            st["cpu"].append((time.process_time() - cpu) * 1000)
            assert response.status_code == 200, response.content[:300]
            if truth:
                st["recalls"].append(len(truth & {item["id"] for item in response.json()}) / len(truth))
    use(default)
    load_end = os.getloadavg()[0]

    def p(values, share):
        values = sorted(values)
        return values[max(0, int(len(values) * share) - 1)] if share < 1 else values[-1]

    rows = []
    for (noise, setting), st in stats.items():
        rows.append((noise, setting, statistics.median(st["times"]), p(st["times"], 0.9),
                     statistics.median(st["cpu"]), float(np.mean(st["recalls"]))))
        print(f"staff search over {len(ids):,} items on MariaDB through the API, query noise {noise}, "
              f"{setting[0]} candidates, ef "
              f"{setting[1]}: p50 {rows[-1][2]:.0f} ms, p90 {rows[-1][3]:.0f} ms, CPU p50 {rows[-1][4]:.0f} ms; "
              f"recall@10 against exact {rows[-1][5]:.3f} ({len(st['recalls'])} queries); "
              f"index build {built / build_s:,.0f} vectors/s", flush=True)
    print(f"load average {load_start:.1f} at the start of the searches, {load_end:.1f} at the end", flush=True)
    if args.readme:
        from benchmarks.sections import write_readme_section

        lines = [
            HEADING, "",
            f"`.venv/bin/python benchmarks/retrieval_staff.py {' '.join(sys.argv[1:])}` (MariaDB, database "
            f"`{args.database}`; see its docstring): {len(ids):,} items ({PER_USER} per user) with clustered random "
            f"512-d vectors, the HNSW index built by `ann_rebuild`'s code from the database, then "
            "`GET /api/v1/memories/search/?q=…&k=10` as support staff through Django's test client, "
            f"{args.queries} queries per noise level (a stored vector plus Gaussian noise), recall@10 against exact search with the same "
            f"scoring over every vector. Load average {build_load[0]:.1f} → {build_load[1]:.1f} during the build, "
            f"{load_start:.1f} → {load_end:.1f} during the searches (2 cores).", "",
        ]
        if not args.skip_build:
            lines += [f"Index build from the database (read + build + write, every core): **{built / build_s:,.0f} "
                      f"vectors/s** ({build_s:.0f} s; {built / build_cpu:,.0f} vectors per CPU second of this "
                      "process, MariaDB's own CPU not counted) — target ≥ 1,500/s.", ""]
        lines += [
            "| query noise (cosine to its item) | candidates asked of the index | HNSW ef_search | p50 ms | p90 ms "
            "| CPU p50 ms | recall@10 |",
            "|---|---:|---:|---:|---:|---:|---:|",
            *[f"| {noise} (~{1 / np.sqrt(1 + noise ** 2 * DIM):.2f}) | {c:,}{' (the code)' if (c, ef) == default else ''} "
              f"| {ef:,} | {p50:.0f} | {p90:.0f} | {cpu:.0f} | {rec:.3f} |" for noise, (c, ef), p50, p90, cpu, rec in rows], "",
            "Targets: p50 < 300 ms, recall@10 ≥ 0.95.", "",
        ]
        write_readme_section(README, HEADING, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
