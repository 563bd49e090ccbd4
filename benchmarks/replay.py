"""Benchmark of the replay: a conversation call by call under every context strategy, and the big trace page.

Run: ``.venv/bin/python benchmarks/replay.py`` (``--no-readme`` to only print). Writes its table into
``benchmarks/README.md`` under ``## Replay``.

Measured through the Django test client (routing, session auth, the view, the strategy module, JSON or
templates), signed in as a developer, on a fresh SQLite file, offline models, product defaults:

* ``POST /api/v1/strategies/replay`` of a 300-call agent trace (150 user turns, each with one tool round:
  600 messages) under the five context strategies with their default parameters (target < 2 s), with the
  ideal cache and with Anthropic's (breakpoints, minimum, lifetime; summary calls billed too);
* the replay page of the same trace (all five strategies, gpt-4o-mini's OpenAI cache, charts and strips,
  the same-budget ranking);
* the playground page of a pasted 3,000-message trace (target < 1 s to the first byte: the test client
  receives the whole page, so this is an upper bound of the first byte);
* baseline, in the same run: ``POST /api/v1/strategies/context/composite/apply`` once on the whole trace
  (what the playground computed before the replay existed), so the replay's cost reads as a ratio too.

Each case runs ``--runs`` times (default 5), the cases alternated within each round; the table gives the
median and the spread (min–max), with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.playground import _messages, _setup, _trace  # noqa: E402
from benchmarks.sections import write_readme_section  # noqa: E402

README = ROOT / "benchmarks" / "README.md"
HEADING = "## Replay"
REPLAY_TARGET_MS = 2000
PAGE_TARGET_MS = 1000
STRATEGIES = ["TRIM", "SUMMARIZE", "SLIDING_WINDOW", "CLEAR_TOOL_RESULTS", "COMPOSITE"]


def agent_trace(turns: int = 150) -> list[dict]:
    """``turns`` user turns, each answered after one tool round: 2 × turns model calls."""
    out = [{"role": "system", "content": "You are a helpful assistant that looks things up before answering."}]
    for n in range(turns):
        out += [
            {"role": "user", "content": f"Question {n}: how does the cache behave when the dataset grows? " * 2},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{n}", "type": "function",
                "function": {"name": "search_docs", "arguments": json.dumps({"query": f"cache growth {n}"})}}]},
            {"role": "tool", "tool_call_id": f"call_{n}",
             "content": json.dumps({"results": [{"title": f"Doc {n}.{k}", "text": "cache eviction " * 30}
                                                for k in range(3)]})},
            {"role": "assistant", "content": f"Answer {n}: it evicts the least recently used keys first. " * 3},
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--page-messages", type=int, default=3000)
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        client = _setup(pathlib.Path(tmp) / "bench.sqlite3")
        trace = agent_trace(args.turns)
        body = json.dumps({"messages": trace, "strategies": [{"name": s} for s in STRATEGIES]})
        anthropic_body = json.dumps({"messages": trace, "strategies": [{"name": s} for s in STRATEGIES],
                                     "cache_model": "anthropic", "seconds_between_calls": 30,
                                     "price": {"input": 3.0, "cached_input": 0.3, "output": 15.0}})
        apply_body = json.dumps({"messages": trace, "keep_system": True})
        trace_id = _trace(client, json.dumps(trace))
        big_id = _trace(client, json.dumps(_messages(args.page_messages), ensure_ascii=False))
        cases = {
            "POST /api/v1/strategies/replay, 5 strategies": lambda: client.post(
                "/api/v1/strategies/replay", body, content_type="application/json"),
            "POST /api/v1/strategies/replay, 5 strategies, anthropic cache": lambda: client.post(
                "/api/v1/strategies/replay", anthropic_body, content_type="application/json"),
            "replay page, 5 strategies": lambda: client.get("/playground/replay/", {"trace": trace_id}),
            f"playground page, pasted {args.page_messages:,}-message trace": lambda: client.get(
                "/playground/", {"trace": big_id}),
            "baseline: POST …/context/composite/apply once": lambda: client.post(
                "/api/v1/strategies/context/composite/apply", apply_body, content_type="application/json"),
        }
        calls = client.post("/api/v1/strategies/replay", body, content_type="application/json").json()["calls"]
        times: dict[str, list[float]] = {name: [] for name in cases}
        for name, fn in cases.items():  # warm-up: templates, first queries
            assert fn().status_code == 200, name
        for _ in range(args.runs):
            for name, fn in cases.items():
                start = time.perf_counter()
                response = fn()
                times[name].append((time.perf_counter() - start) * 1000)
                assert response.status_code == 200, (name, response.status_code)
    load_after = os.getloadavg()[0]
    baseline = statistics.median(times["baseline: POST …/context/composite/apply once"])
    lines = ["| case | median ms | min–max ms | × baseline |", "|---|---:|---:|---:|"]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"| {name} | {median:,.0f} | {min(values):,.0f}–{max(values):,.0f} | {median / baseline:.1f} |")
    replay_ms = statistics.median(times["POST /api/v1/strategies/replay, 5 strategies"])
    anthropic_ms = statistics.median(times["POST /api/v1/strategies/replay, 5 strategies, anthropic cache"])
    page_ms = statistics.median(times[f"playground page, pasted {args.page_messages:,}-message trace"])
    verdict = [
        f"Replay of {calls} calls under 5 strategies: {replay_ms:,.0f} ms "
        f"({'met' if replay_ms < REPLAY_TARGET_MS else 'missed'}: target < {REPLAY_TARGET_MS:,} ms).",
        f"The same with Anthropic's cache model: {anthropic_ms:,.0f} ms "
        f"({'met' if anthropic_ms < REPLAY_TARGET_MS else 'missed'}: target < {REPLAY_TARGET_MS:,} ms).",
        f"{args.page_messages:,}-message trace page: {page_ms:,.0f} ms "
        f"({'met' if page_ms < PAGE_TARGET_MS else 'missed'}: target < {PAGE_TARGET_MS:,} ms to the first byte).",
    ]
    section = (
        f"{HEADING}\n\n"
        "`.venv/bin/python benchmarks/replay.py` — through the Django test client, signed in as a developer, "
        "SQLite, offline models, default parameters. The agent trace has "
        f"{args.turns} user turns, each with one tool round ({len(trace)} messages, {calls} model calls). "
        f"{args.runs} rounds, cases alternated in each round. "
        f"(Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load_before:.1f} before, {load_after:.1f} after.)\n\n"
        + "\n".join(lines) + "\n\n" + "\n".join(f"- {v}" for v in verdict) + "\n\n"
    )
    print(section)
    if not args.no_readme:
        write_readme_section(README, HEADING, section)


if __name__ == "__main__":
    main()
