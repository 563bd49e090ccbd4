"""Benchmark of the playground: how fast a strategy column and the whole page render for big inputs.

Run: ``.venv/bin/python benchmarks/playground.py`` (``--no-readme`` to only print). Writes its table into
``benchmarks/README.md`` under ``## Playground``.

Measured through the Django test client (URL routing, the view, the strategy, the templates), signed in
as a developer, on a fresh SQLite file, offline models:

* a context column re-render (the htmx GET when one strategy's parameter changes), on a pasted trace
  (stored once, read back by its id in each request);
* the whole page for a stored conversation (every context column, the memory plans, the context window),
  each strategy with its own settings, and in the same-budget mode (every strategy fitted to one budget,
  ranked).

Targets: a column re-render of 10,000 messages under 300 ms (median) and its HTML under 200 KB (long runs
of dropped messages are collapsed, long content is cut), so a parameter change feels immediate.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import random
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.sections import write_readme_section  # noqa: E402

README = ROOT / "benchmarks" / "README.md"
HEADING = "## Playground"
COLUMN_TARGET_MS = 300
HTML_TARGET_KB = 200
WORDS = ("memory", "context", "token", "agent", "用户", "偏好", "summary", "window", "数据库", "migration")


def _messages(n: int, seed: int = 5) -> list[dict]:
    rng = random.Random(seed)
    out = [{"role": "system", "content": "You are a helpful assistant."}]
    for i in range(1, n):
        words = rng.randint(5, 60)
        out.append({"role": "user" if i % 2 else "assistant", "content": " ".join(rng.choices(WORDS, k=words))})
    return out


def _setup(db_path: pathlib.Path):
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "memoryboard.settings"
    os.environ.pop("OPENAI_BASE_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["testserver"]
    settings.LANGUAGE_CODE = "en"
    call_command("migrate", verbosity=0)
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from memoryboard.roles import ensure_role_groups

    ensure_role_groups()
    user = User.objects.create_user("bench-dev", is_staff=True)
    user.groups.add(Group.objects.get(name="developers"))
    client = Client()
    client.force_login(user)
    return client


def _store(conversation_id: str, messages: list[dict]) -> None:
    from memoryboard.models import ChatMessage

    ChatMessage.objects.bulk_create(
        [ChatMessage(conversation_id=conversation_id, agent_id="chat", user_id="1", role=m["role"].upper(),
                     content=m["content"]) for m in messages],
        batch_size=2000,
    )


def _time(fn, repeats: int) -> tuple[float, int]:
    times, size = [], 0
    fn()  # warm-up: template compilation and first-query costs are not what is measured
    for _ in range(repeats):
        start = time.perf_counter()
        response = fn()
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.status_code
        size = len(response.content)
    return statistics.median(times), size


def _trace(client, payload: str) -> str:
    response = client.post("/playground/", {"messages_json": payload})
    assert response.status_code == 302, response.status_code
    return response["Location"].split("trace=")[1]


def measure(client, sizes: list[int], repeats: int) -> list[dict]:
    rows = []
    for n in sizes:
        messages = _messages(n)
        payload = json.dumps(messages, ensure_ascii=False)
        trace = _trace(client, payload)
        half = int(sum(len(m["content"]) / 2.5 + 4 for m in messages) / 2)
        cases = [
            ("column SLIDING_WINDOW max_tokens=4000", "sliding_window", {"c-sliding_window-max_tokens": "4000"}),
            ("column SLIDING_WINDOW ½ of the input", "sliding_window", {"c-sliding_window-max_tokens": str(half)}),
            ("column TRIM 2+10", "trim", {"c-trim-keep_first": "2", "c-trim-keep_last": "10"}),
        ]
        for label, name, form in cases:
            ms, size = _time(lambda: client.get(f"/playground/context/{name}/", {"trace": trace, **form}), repeats)
            rows.append({"case": label, "n": n, "ms": ms, "kb": size / 1024})
        cid = f"bench-{n}"
        _store(cid, messages)
        page_repeats = max(3, repeats // 3)
        ms, size = _time(lambda: client.get("/playground/", {"conversation": cid}), page_repeats)
        rows.append({"case": "whole page, stored conversation (columns + plans + window)", "n": n, "ms": ms,
                     "kb": size / 1024})
        ms, size = _time(lambda: client.get("/playground/", {"conversation": cid, "mode": "budget",
                                                            "budget": str(half)}), page_repeats)
        rows.append({"case": "whole page, same budget (½ of the input), ranked", "n": n, "ms": ms,
                     "kb": size / 1024})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| case | messages | median ms | HTML KB |", "|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['n']:,} | {r['ms']:.1f} | {r['kb']:.0f} |")
    return "\n".join(lines)


def verdict(rows: list[dict]) -> list[str]:
    missed = [
        f"- {r['case']} at {r['n']:,} messages: {r['ms']:.0f} ms, {r['kb']:.0f} KB"
        for r in rows
        if r["case"].startswith("column") and r["n"] <= 10_000
        and (r["ms"] > COLUMN_TARGET_MS or r["kb"] > HTML_TARGET_KB)
    ]
    return ["Targets missed in this run:", "", *missed] if missed else ["All column targets met in this run."]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        client = _setup(pathlib.Path(tmp) / "bench.sqlite3")
        rows = measure(client, sizes, args.repeats)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    section = (
        f"{HEADING}\n\n"
        "`.venv/bin/python benchmarks/playground.py` — the playground through the Django test client (routing, "
        "view, strategy, templates), signed in as a developer, SQLite, offline models. A *column* is the htmx "
        "GET when one strategy's parameter changes (the pasted trace is stored once and read back by its id); "
        "the *whole page* loads a stored conversation and renders every context column, the memory plans and "
        "the context window, with each strategy's own settings or every strategy fitted to one budget and "
        "ranked. Long runs of dropped/summarized messages collapse into one line with a count, content over 280 "
        "characters is cut behind a toggle. "
        f"Targets: a column of 10,000 messages under {COLUMN_TARGET_MS} ms and {HTML_TARGET_KB} KB. "
        f"(Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f} at the end.)\n\n"
        f"{table(rows)}\n\n" + "\n".join(verdict(rows)) + "\n\n"
    )
    print(section)
    if not args.no_readme:
        write_readme_section(README, HEADING, section)


if __name__ == "__main__":
    main()
