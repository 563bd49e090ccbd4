"""Benchmark: what the reconcile step adds to a save, for a user holding many items.

Run::

    .venv/bin/python benchmarks/reconcile_save.py                       # 5,000 items, 200 saves each way
    .venv/bin/python benchmarks/reconcile_save.py --items 1000 --saves 20   # a small run
    .venv/bin/python benchmarks/reconcile_save.py --turns 200               # a chat turn: extraction + reconcile
    .venv/bin/python benchmarks/reconcile_save.py --items 500 --turns 10    # a small run of that

One fresh SQLite file in a temporary directory (never the development database), the default offline
embedder (USE) warmed up, one user with ``--items`` current items of one agent (texts of the kind users
say, English and Chinese; vectors are random unit vectors stored under the model's name: embedding them
would measure the model, not the save). Then, alternating, ``--saves`` saves of a new statement each way,
end to end through the service, each in its own transaction as a request makes it:

- without: ``services.memory_create`` (the item, its vector, the audit entry);
- with: ``reconcile.memory_save_reconciled`` (the namespace lock, the candidates of
  ``ltm.write.reconcile_scope``: the nearest by cosine and those of the same slot, the offline rules' decision,
  the same writes, or a reinforcement when the rules find a repeat).

Each save adds an item, so the next search of the scope finds it changed: the reconcile step's index of
the scope is patched with the items written since, as in a user's session of saves. Both ways embed the
statement once.
Prints p50, p90 and the mean wall time of each way and their difference (the target: < 10 ms at p50),
and the median CPU time of this process (less sensitive to other processes on the machine). A "with" save
that the rules find a repeat writes no row (a reinforcement): it is not a save, and is reported apart,
never in the "with" figures the target compares.

``--turns N``: instead, N chat turns of 10 sentences (``benchmarks/extraction.py``'s sentences), each
extracted offline (``llm.extraction.OfflineExtractor``, the encoder's memory of recent texts emptied first)
and its items built, reconciled and saved as the extraction task does (one check of whether they wait for
review, then ``reconcile.memory_save_many_reconciled``: the scope read once, the candidates, the offline
decision on the shipped encoder, the writes), each turn in a transaction that
is rolled back (the user keeps ``--items`` items). Prints p50 and p90 of the extraction, of the
reconcile-and-save, and of the two together (the target: < 30 ms at p50 at 5,000 items), with the median
CPU time of this process for each. ``--commit``: each turn commits, as a chat's does (the reconcile step then
follows the change log from the position the turn read), and its items are deleted after it, not timed.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SUBJECTS_EN = ["I like {x}.", "I often visit {x}.", "My friend works at {x}.", "I read a book about {x}.",
               "I am learning {x}.", "I went to {x} last summer.", "My sister likes {x}.", "I bought a {x}."]
SUBJECTS_ZH = ["我喜欢{x}。", "我经常去{x}。", "我朋友在{x}工作。", "我在学{x}。", "我去年去了{x}。", "我妹妹喜欢{x}。"]
THINGS = ["jazz", "hiking", "Kubernetes", "Postgres", "Paris", "Lisbon", "chess", "the guitar", "sourdough",
          "Japanese", "photography", "red wine", "a bicycle", "Rust", "gardening", "sushi", "yoga", "Kyoto",
          "咖啡", "跑步", "日语", "爬山", "火锅", "围棋", "摄影", "杭州", "京剧", "书法"]


def _setup(db: pathlib.Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "memoryboard.settings"
    os.environ["MEMORYBOARD_EMBEDDER"] = "use"
    os.environ["MEMORYBOARD_ANN_DIR"] = str(db.parent / "ann")
    os.environ["MEMORYBOARD_TASKS_INLINE"] = "1"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _statement(rng: random.Random, n: int) -> str:
    if rng.random() < 0.5:
        return rng.choice(SUBJECTS_EN).format(x=rng.choice(THINGS)) + f" ({n})"
    return rng.choice(SUBJECTS_ZH).format(x=rng.choice(THINGS)) + f"（{n}）"


def _fill(namespace, count: int, rng: random.Random, model: str, dim: int) -> None:
    from django.db import connection, transaction

    from memoryboard.ltm.search.embeddings import _upsert_sql
    from memoryboard.ltm.write.items import memory_build
    from memoryboard.ltm.store.upsert import memory_upsert_many
    from memoryboard.models import vector_checksum

    memories = [memory_build(namespace=namespace, content=_statement(rng, i), memory_type="FACT", source="manual",
                             agent_id="chat") for i in range(count)]
    vectors = np.random.default_rng(7).standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with transaction.atomic():
        memory_upsert_many(memories)
        now = connection.ops.adapt_datetimefield_value(memories[0].created_at)
        rows = [(m.pk, model, dim, v.tobytes(), vector_checksum(v.tobytes()), now) for m, v in zip(memories, vectors)]
        with connection.cursor() as cursor:
            cursor.executemany(_upsert_sql(connection.vendor), rows)


class _Rollback(Exception):
    pass


def _turns(namespace, count: int, *, commit: bool = False) -> None:
    from django.db import transaction

    from benchmarks.extraction import turn
    from memoryboard.llm.embeddings import UniversalSentenceEncoder
    from memoryboard.llm.extraction import offline_extractor
    from memoryboard.ltm.write.items import memory_build
    from memoryboard.ltm.write.reconcile import memory_save_many_reconciled
    from memoryboard.ltm.write.review import review_required
    from memoryboard.models import LongTermMemory

    extractor = offline_extractor()
    rng = random.Random(1)
    texts = [turn(rng) for _ in range(count + 1)]
    extract_ms, save_ms, total_ms, verdicts, items = [], [], [], {}, []
    cpu_ms: dict[str, list[float]] = {"extraction": [], "reconcile and save": [], "turn (both)": []}
    for index, text in enumerate(texts):
        UniversalSentenceEncoder.recent.clear()
        start, start_cpu = time.perf_counter(), time.process_time()
        found = extractor.extract([{"role": "user", "content": text}])
        middle, middle_cpu = time.perf_counter(), time.process_time()
        try:
            with transaction.atomic():
                review = review_required(agent_id="chat", source="auto_extract", user_id=namespace.user_id)
                memories = [memory_build(namespace=namespace, content=item.content, memory_type=item.type,
                                         source="auto_extract", agent_id="chat", review=review) for item in found]
                results = memory_save_many_reconciled(namespace=namespace, memories=memories, event="extract")
                if not commit:
                    end, end_cpu = time.perf_counter(), time.process_time()
                    raise _Rollback
            end, end_cpu = time.perf_counter(), time.process_time()
            # Not timed: the turn's items deleted (the user keeps ``--items`` items), as a later write.
            LongTermMemory.objects.filter(pk__in=[r.memory.pk for r in results if r.created]).delete()
        except _Rollback:
            pass
        if index == 0:  # the first turn builds the scope's index
            continue
        extract_ms.append((middle - start) * 1000)
        save_ms.append((end - middle) * 1000)
        total_ms.append((end - start) * 1000)
        for label, spent in (("extraction", middle_cpu - start_cpu), ("reconcile and save", end_cpu - middle_cpu),
                             ("turn (both)", end_cpu - start_cpu)):
            cpu_ms[label].append(spent * 1000)
        items.append(len(found))
        for result in results:
            verdicts[result.decision.verdict] = verdicts.get(result.decision.verdict, 0) + 1
    print(f"{count} turns of 10 sentences ({statistics.fmean(items):.1f} items each) for a user with "
          f"{namespace_count(namespace):,} items, each turn {'committed' if commit else 'rolled back'}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'':<26}{'p50 ms':>10}{'p90 ms':>10}{'CPU p50 ms':>12}")
    for label, times in (("extraction", extract_ms), ("reconcile and save", save_ms), ("turn (both)", total_ms)):
        stats = _stats(times)
        print(f"{label:<26}{stats['p50']:>10.1f}{stats['p90']:>10.1f}{statistics.median(cpu_ms[label]):>12.1f}")
    print(f"decisions: {verdicts}")


def namespace_count(namespace) -> int:
    from memoryboard.ltm.search.retrieval import namespace_scope

    return namespace_scope(namespace).filter(archived=False).count()


def _stats(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"p50": statistics.median(ordered), "p90": ordered[max(0, int(len(ordered) * 0.9) - 1)],
            "mean": statistics.fmean(ordered)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=5_000)
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--turns", type=int, default=0,
                        help="measure N chat turns (extraction and reconcile) instead of single saves")
    parser.add_argument("--commit", action="store_true",
                        help="with --turns: commit each turn (its items then deleted, untimed), not roll it back")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _setup(pathlib.Path(tmp) / "bench.sqlite3")
        from memoryboard.llm.factory import get_embedder, warm_up
        from memoryboard.models.namespaces import build_namespace
        from memoryboard.ltm.write.reconcile import memory_save_reconciled
        from memoryboard.ltm.search.retrieval import memory_rank, namespace_scope
        from memoryboard.ltm.write.items import memory_create

        warm_up()
        embedder = get_embedder()
        rng = random.Random(13)
        namespace = build_namespace(agent_namespace="chat", user_id="bench")
        _fill(namespace, args.items, rng, embedder.name, int(embedder.dim))
        memory_rank(queryset=namespace_scope(namespace), query="warm up", k=10)  # the scope's first build
        if args.turns:
            return _turns(namespace, args.turns, commit=args.commit)
        memory_save_reconciled(namespace=namespace, content="I live in Lisbon.", memory_type="FACT", agent_id="chat")
        without, with_, cpu_without, cpu_with, repeats = [], [], [], [], []
        verdicts: dict[str, int] = {}
        for i in range(args.saves):
            for way in ((0, 1) if i % 2 == 0 else (1, 0)):
                text = _statement(rng, args.items + 2 * i + way)
                start, start_cpu = time.perf_counter(), time.process_time()
                if way == 0:
                    memory_create(namespace=namespace, content=text, memory_type="FACT", agent_id="chat")
                    without.append((time.perf_counter() - start) * 1000)
                    cpu_without.append((time.process_time() - start_cpu) * 1000)
                else:
                    result = memory_save_reconciled(namespace=namespace, content=text, memory_type="FACT",
                                                    agent_id="chat")
                    wall, cpu = (time.perf_counter() - start) * 1000, (time.process_time() - start_cpu) * 1000
                    if result.created:
                        with_.append(wall)
                        cpu_with.append(cpu)
                    else:  # a repeat: no row written
                        repeats.append(wall)
                    verdicts[result.decision.verdict] = verdicts.get(result.decision.verdict, 0) + 1
        a, b = _stats(without), _stats(with_)
        load = os.getloadavg()[0]
        print(f"save of a user with {args.items:,} items ({args.saves} saves each way, alternating; "
              f"load average {load:.1f}; model {embedder.name})")
        print(f"{'':<20}{'p50 ms':>10}{'p90 ms':>10}{'mean ms':>10}")
        print(f"without: {len(without)} saves; with: {len(with_)} saves that wrote a row "
              f"({len(repeats)} repeats wrote none: not counted)")
        print(f"{'without reconcile':<20}{a['p50']:>10.1f}{a['p90']:>10.1f}{a['mean']:>10.1f}")
        print(f"{'with reconcile':<20}{b['p50']:>10.1f}{b['p90']:>10.1f}{b['mean']:>10.1f}")
        print(f"{'added':<20}{b['p50'] - a['p50']:>10.1f}{b['p90'] - a['p90']:>10.1f}{b['mean'] - a['mean']:>10.1f}")
        cpu_a, cpu_b = statistics.median(cpu_without), statistics.median(cpu_with)
        print(f"CPU of this process, p50: without {cpu_a:.1f} ms, with {cpu_b:.1f} ms, added {cpu_b - cpu_a:.1f} ms")
        if repeats:
            r = _stats(repeats)
            print(f"{'repeats (no row)':<20}{r['p50']:>10.1f}{r['p90']:>10.1f}{r['mean']:>10.1f}")
        print(f"decisions: {verdicts}")


if __name__ == "__main__":
    main()
