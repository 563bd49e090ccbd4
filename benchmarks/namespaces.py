"""Benchmark of namespace scoping at 1,000,000 rows on MariaDB: every writer's spelling vs compact only.

Run on the admin benchmark's database (seeded by ``benchmarks/admin.py --seed``; a quarter of its rows
are stored with the spaced spelling ``["agent:x", "user:n", "memories"]``)::

    DATABASE_URL=mysql://root@127.0.0.1:3306/mb_bench_admin .venv/bin/python benchmarks/namespaces.py

Each case runs the query memoryboard issues now (``ltm.store.selectors``: an indexed ``namespace IN`` over every
spelling real writers produce, re-checked with ``BINARY``) and the one it issued before issue 12 (``IN``
over the compact spelling plus a ``LIKE BINARY`` suffix check), interleaved in the same run, and prints
the median ms of each, their ratio and the rows each finds (the old query misses the spaced rows).
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REPEATS = 200
USERS = ("4242", "17", "31337")


def _setup() -> None:
    os.environ.setdefault("DATABASE_URL", "mysql://root@127.0.0.1:3306/mb_bench_admin")
    if "mb_bench" not in os.environ["DATABASE_URL"]:
        raise SystemExit("refusing to run against a database whose name has no 'mb_bench' in it")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")
    os.environ.setdefault("MEMORYBOARD_DEBUG", "0")
    import django

    django.setup()


def _old_user_q(user_id: str, agents: list[str]):
    """The scope before issue 12: the compact spelling under each agent, plus the binary suffix."""
    from django.db.models import Q

    names = [json.dumps([f"agent:{a}", f"user:{user_id}", "memories"], separators=(",", ":")) for a in agents]
    return Q(namespace__in=names) & Q(namespace__endswith="," + json.dumps(
        [f"user:{user_id}", "memories"], separators=(",", ":"))[1:])


def _old_agent_q(agent: str):
    from django.db.models import Q

    prefix = json.dumps([f"agent:{agent}"])[:-1] + ","
    return Q(namespace__istartswith=prefix) & Q(namespace__startswith=prefix)


def main() -> None:
    _setup()
    from memoryboard.models.namespaces import build_namespace, namespace_spellings
    from memoryboard.ltm.search.retrieval import _candidate_rows
    from memoryboard.ltm.store.selectors import namespace_texts_q
    from memoryboard.ltm.store.selectors import agent_q, known_agent_namespaces, user_namespaces_q
    from memoryboard.models import LongTermMemory

    agents = [ns for ns, _label in known_agent_namespaces()]
    page = lambda q: list(LongTermMemory.objects.filter(q).order_by("-updated_at", "-id").values_list("pk", flat=True)[:50])  # noqa: E731
    every = lambda q: list(LongTermMemory.objects.filter(q).values_list("pk", flat=True))  # noqa: E731
    cases = []
    for user in USERS:
        cases.append((f"user {user}, all items (every agent)", lambda u=user: every(user_namespaces_q(u)),
                      lambda u=user: every(_old_user_q(u, agents))))
        ns = build_namespace(agent_namespace="chat", user_id=user)
        # The one search path's candidate query (issue 13), every spelling vs the compact one only.
        cases.append((f"user {user} + agent chat, retrieval candidates",
                      lambda n=ns: _candidate_rows(LongTermMemory.objects.filter(
                          namespace_texts_q(namespace_spellings(n)), archived=False)),
                      lambda n=ns: _candidate_rows(LongTermMemory.objects.filter(
                          namespace_texts_q([n.key()]), archived=False))))
    cases.append(("agent coder, first page by -updated_at", lambda: page(agent_q("coder")),
                  lambda: page(_old_agent_q("coder"))))
    print(f"agents: {agents}; {REPEATS} interleaved repeats per case\n")
    print("| case | new ms | old ms | new / old | rows new | rows old |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, new, old in cases:
        rows_new, rows_old = len(new()), len(old())
        times_new, times_old = [], []
        for _ in range(REPEATS):
            for fn, out in ((new, times_new), (old, times_old)):
                start = time.perf_counter()
                fn()
                out.append((time.perf_counter() - start) * 1000)
        mn, mo = statistics.median(times_new), statistics.median(times_old)
        print(f"| {name} | {mn:.2f} | {mo:.2f} | {mn / mo:.2f} | {rows_new} | {rows_old} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
