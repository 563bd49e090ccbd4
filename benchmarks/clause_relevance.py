"""Benchmark: what reading items by their best clause adds to the agent's search.

Run::

    .venv/bin/python benchmarks/clause_relevance.py               # 200 items, 60 questions, 5 rounds
    .venv/bin/python benchmarks/clause_relevance.py --items 1000  # a larger scope

One fresh SQLite file in a temporary directory, the default offline embedder (USE), one user holding
``--items`` turns of the development conversations (``tests/data/dev/conversations.json``: messages with
clauses, as people write them), embedded. Then ``memory_rank`` at the agent's minimum relevance for each of
the set's first ``--questions`` questions, the query's vector made beforehand (both ways embed it once), with
``ranking.CLAUSE_POOL`` at its value and at 0 (no clause read), alternated over ``--rounds`` rounds:

- warm: the clauses' vectors are among the encoder's recent texts (a user's next turns);
- cold: the encoder's recent texts are emptied before each search (a process that never saw them, or a user
  whose items' clauses were pushed out by others'): every clause read is embedded.

Prints the median per round and the median over rounds of each way, in milliseconds of wall time. No target:
the end-to-end cost is the proxy's (benchmarks/README.md § Proxy).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="mb-clauses-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")
    os.environ["MEMORYBOARD_DEBUG"] = "0"
    os.environ.setdefault("MEMORYBOARD_SECRET_KEY", "clause-benchmark-only-" + "0123456789abcdef" * 3)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from memoryboard.llm.embeddings import UniversalSentenceEncoder
    from memoryboard.llm.factory import get_embedder
    from memoryboard.ltm.search import ranking
    from memoryboard.ltm.search.embeddings import memory_embed_many
    from memoryboard.ltm.search.retrieval import memory_rank
    from memoryboard.ltm.store.selectors import own_memories
    from memoryboard.ltm.store.upsert import memory_upsert_many
    from memoryboard.ltm.write.items import memory_build
    from memoryboard.models.namespaces import build_namespace

    data = json.loads((ROOT / "tests" / "data" / "dev" / "conversations.json").read_text(encoding="utf-8"))
    turns = [turn["text"] for c in data["conversations"] for s in c["sessions"] for turn in s["turns"]]
    questions = [q["query"] for q in data["queries"]][: args.questions]
    namespace = build_namespace(agent_namespace="chat", user_id="bench")
    items = [memory_build(namespace=namespace, content=text, memory_type="FACT", source="manual", agent_id="chat")
             for text in turns[: args.items]]
    memory_upsert_many(items)
    memory_embed_many(items)
    embedder = get_embedder()
    pool = ranking.CLAUSE_POOL

    def searches(clauses: int, cold: bool) -> float:
        ranking.CLAUSE_POOL = clauses
        times = []
        for question in questions:
            if cold:
                UniversalSentenceEncoder.recent.clear()
            embedder.embed([question])
            start = time.perf_counter()
            memory_rank(queryset=own_memories(user_id="bench"), query=question, k=10, embedder=embedder,
                        user_id="bench")
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times)

    searches(pool, False), searches(0, False)  # the scope built, the clauses seen once
    print(f"{len(items)} items, {len(questions)} questions, CLAUSE_POOL {pool}, {embedder.name}, load "
          f"{os.getloadavg()[0]:.1f}")
    for cold in (False, True):
        with_clauses, without = [], []
        for _round in range(args.rounds):
            with_clauses.append(searches(pool, cold))
            without.append(searches(0, cold))
        name = "cold" if cold else "warm"
        print(f"{name}: with clauses {statistics.median(with_clauses):.2f} ms "
              f"[{min(with_clauses):.2f}-{max(with_clauses):.2f}], without {statistics.median(without):.2f} ms "
              f"[{min(without):.2f}-{max(without):.2f}]; load {os.getloadavg()[0]:.1f}")
    ranking.CLAUSE_POOL = pool


if __name__ == "__main__":
    main()
