"""Benchmark of the context strategies TRIM and SLIDING_WINDOW.

Run: ``.venv/bin/python benchmarks/strategies.py`` (``--quick`` for fewer repeats, ``--no-write`` to only
print). Prints a markdown table and writes it into ``benchmarks/README.md`` under ``## Strategies``.

Compared in the same run, on the same messages:

* ``memoryboard``: :func:`memoryboard.strategies.sliding_window` / :func:`~memoryboard.strategies.trim`, on a
  list of our ``Message`` objects (building the whole ``ContextResult``: output, kept/dropped indexes,
  tokens before/after).
* ``langchain``: ``langchain_core.messages.trim_messages`` on the same content as LangChain messages, with the
  same token estimate (``len(content) / 2.5 + 4`` per message, as a ``token_counter`` over a list) and the
  same budget. LangChain has no first+last trim; the equivalent is two calls, ``strategy="first"`` and
  ``strategy="last"``, concatenated: once with ``token_counter=len`` (LangChain's idiomatic way to count
  messages, budgets 2 and 10) and once with the shared token counter (budgets = tokens of the first 2 and of
  the last 10 messages).
* ``floor``: a bare loop that only sums ``len(content)`` over the messages: any strategy that reports the
  tokens of its input must at least do this.

Input conversion (JSON dicts to ``Message``) is measured on its own row.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import statistics
import sys
import timeit
from operator import attrgetter

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.sections import write_readme_section  # noqa: E402

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages  # noqa: E402

from memoryboard.strategies import Message, sliding_window, to_messages, trim  # noqa: E402

README = ROOT / "benchmarks" / "README.md"
HEADING = "## Strategies"
SIZES = (10_000, 100_000)
BUDGET = 4000
KEEP_FIRST, KEEP_LAST = 2, 10
_content = attrgetter("content")

WORDS = ("memory", "context", "token", "agent", "用户", "偏好", "summary", "window", "数据库", "migration")


def make_conversation(n: int, seed: int = 42) -> list[dict]:
    rng = random.Random(seed)
    rows = [{"role": "system", "content": "You are a helpful assistant. 你是一个有用的助手。"}]
    for i in range(1, n):
        words = rng.choices(WORDS, k=rng.randint(3, 120))
        rows.append({"role": "user" if i % 2 else "assistant", "content": " ".join(words)})
    return rows


def to_langchain(rows: list[dict]) -> list:
    classes = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [classes[r["role"]](content=r["content"]) for r in rows]


def lc_token_counter(messages: list) -> float:
    """The project's estimate, as LangChain's list token counter: len / 2.5 + 4 per message."""
    return sum(map(len, map(_content, messages))) / 2.5 + 4 * len(messages)


def floor(messages: list[Message]) -> int:
    total = 0
    for m in messages:
        total += len(m.content)
    return total


def samples(contenders: dict[str, object], target_seconds: float, *, gc_on: bool = False) -> dict[str, list[float]]:
    """Seconds per call of each contender over several rounds, timed round-robin so that load changes hit
    all alike. ``gc_on``: the garbage collector runs while timing, as in a server (timeit turns it off)."""
    import gc

    def timer(fn):
        return timeit.Timer(fn, setup="gc.enable()", globals={"gc": gc}) if gc_on else timeit.Timer(fn)

    numbers = {}
    for name, fn in contenders.items():
        once = timer(fn).timeit(number=1)
        numbers[name] = max(1, int(0.02 / once)) if once < 0.02 else 1
    per_round = sum(timer(fn).timeit(number=numbers[name]) for name, fn in contenders.items())
    rounds = max(7, min(41, int(target_seconds / max(per_round, 1e-9))))
    out: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            out[name].append(timer(fn).timeit(number=numbers[name]) / numbers[name])
    return out


def measure(contenders: dict[str, object], target_seconds: float) -> dict[str, float]:
    """Median ms per call of each contender (see :func:`samples`)."""
    return {name: statistics.median(values) * 1000 for name, values in samples(contenders, target_seconds).items()}


def check_same_output(ours, theirs_contents: list[str]) -> None:
    mine = [m.content for m in ours.messages]
    if mine != theirs_contents:
        raise SystemExit(f"{ours.strategy}: outputs differ ({len(mine)} vs {len(theirs_contents)} messages)")


def run(quick: bool) -> list[dict]:
    target = 1.0 if quick else 4.0
    rows_out = []
    for n in SIZES:
        raw = make_conversation(n)
        msgs = list(to_messages(raw))
        lc = to_langchain(raw)
        half = int(lc_token_counter(lc) / 2)
        head_tokens = lc_token_counter(lc[:KEEP_FIRST])
        tail_tokens = lc_token_counter(lc[-KEEP_LAST:])

        def lc_trim_count():
            head = trim_messages(lc, max_tokens=KEEP_FIRST, token_counter=len, strategy="first")
            return head + trim_messages(lc, max_tokens=KEEP_LAST, token_counter=len, strategy="last")

        def lc_trim_tokens():
            head = trim_messages(lc, max_tokens=head_tokens, token_counter=lc_token_counter, strategy="first")
            return head + trim_messages(lc, max_tokens=tail_tokens, token_counter=lc_token_counter, strategy="last")

        def lc_window(budget):
            return trim_messages(lc, max_tokens=budget, token_counter=lc_token_counter, strategy="last")

        ours_trim = trim(msgs, keep_first=KEEP_FIRST, keep_last=KEEP_LAST)
        check_same_output(ours_trim, [m.content for m in lc_trim_count()])
        check_same_output(ours_trim, [m.content for m in lc_trim_tokens()])
        kept = {}
        contenders = {
            "floor": lambda: floor(msgs),
            "convert": lambda: to_messages(raw),
            "trim": lambda: trim(msgs, keep_first=KEEP_FIRST, keep_last=KEEP_LAST),
            "lc_trim_count": lc_trim_count,
            "lc_trim_tokens": lc_trim_tokens,
        }
        for budget in (BUDGET, half):
            ours = sliding_window(msgs, max_tokens=budget)
            check_same_output(ours, [m.content for m in lc_window(budget)])
            kept[budget] = len(ours.messages)
            contenders[f"sw{budget}"] = lambda b=budget: sliding_window(msgs, max_tokens=b)
            contenders[f"lc_sw{budget}"] = lambda b=budget: lc_window(b)
        t = measure(contenders, target)

        def row(case, ours, lc_key, kept_count):
            rows_out.append({"case": case, "n": n, "ours": t[ours], "lc": t[lc_key] if lc_key else None,
                             "floor": t["floor"], "kept": kept_count})

        row("convert JSON dicts → `Message`", "convert", None, n)
        for budget in (BUDGET, half):
            label = f"SLIDING_WINDOW max_tokens={budget:,}" + (" (½ of input)" if budget == half else "")
            row(label, f"sw{budget}", f"lc_sw{budget}", kept[budget])
        row(f"TRIM {KEEP_FIRST}+{KEEP_LAST} vs 2× trim_messages, `token_counter=len`", "trim", "lc_trim_count",
            len(ours_trim.messages))
        row(f"TRIM {KEEP_FIRST}+{KEEP_LAST} vs 2× trim_messages, same token counter", "trim", "lc_trim_tokens",
            len(ours_trim.messages))
    return rows_out


def table(rows: list[dict]) -> str:
    lines = [
        "| case | messages | kept | memoryboard ms | trim_messages ms | floor ms | speed-up vs trim_messages | × floor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lc = "–" if r["lc"] is None else f"{r['lc']:.2f}"
        speedup = "–" if r["lc"] is None else f"{r['lc'] / r['ours']:.1f}×"
        lines.append(
            f"| {r['case']} | {r['n']:,} | {r['kept']:,} | {r['ours']:.2f} | {lc} | {r['floor']:.2f} | {speedup} | "
            f"{r['ours'] / r['floor']:.2f} |"
        )
    return "\n".join(lines)


def section(rows: list[dict], load: float) -> str:
    import platform

    return f"""{HEADING}

`.venv/bin/python benchmarks/strategies.py` — context strategies TRIM and SLIDING_WINDOW of
`memoryboard.strategies` against LangChain's `langchain_core.messages.trim_messages` (a benchmark-only
dependency, `requirements-bench.txt`; never imported by memoryboard) and against a floor, in one run.
Median of timeit repeats, contenders timed round-robin, in milliseconds (Python {platform.python_version()}, {platform.machine()},
{os.cpu_count()} CPUs, load average {load:.1f} when the run started: on a busy machine the absolute times
grow, the ratios are what to compare).

- Input: a list of our `Message` objects, built beforehand (LangChain gets the same content as
  `SystemMessage`/`HumanMessage`/`AIMessage`). Converting JSON dicts to `Message` is its own row.
- memoryboard builds the full `ContextResult` (output tuple, kept/dropped indexes, tokens before/after).
- SLIDING_WINDOW vs `trim_messages(strategy="last")` with the same budget and the same estimate,
  `len(content) / 2.5 + 4` per message, passed as a `token_counter` over a list (written with `map`, measured
  faster than a comprehension on LangChain messages). Both produce the same messages (checked by the script).
- TRIM (first 2 + last 10): LangChain has no first+last mode; the equivalent is two `trim_messages` calls,
  `strategy="first"` then `strategy="last"`, concatenated, measured two ways: (a) `token_counter=len`
  (LangChain's idiomatic message count) with budgets 2 and 10 — generous to LangChain, which then counts no
  tokens at all while memoryboard still computes the input's token estimate, so memoryboard cannot go below
  the floor here; (b) the same token counter as above, with budgets equal to the tokens of the first 2 and
  the last 10 messages — the like-for-like comparison. All variants produce the same messages.
- floor: a bare `for` loop summing `len(content)`: every strategy reporting `tokens_before` must do this.
  memoryboard reads `Message.size`, computed once when a message is read (the convert row pays for it),
  which is why a strategy can come in under this floor.
- Targets: ≥ 3× faster than `trim_messages`, within 3× of the floor.

{table(rows)}

{verdict(rows)}
"""


def verdict(rows: list[dict]) -> str:
    missed = []
    for r in rows:
        if r["lc"] is not None and r["lc"] / r["ours"] < 3:
            missed.append(f"{r['case']} at {r['n']:,} messages: {r['lc'] / r['ours']:.1f}× faster than trim_messages")
        if r["lc"] is not None and r["ours"] / r["floor"] > 3:
            missed.append(f"{r['case']} at {r['n']:,} messages: {r['ours'] / r['floor']:.1f}× the floor")
    if not missed:
        return "All strategy rows meet both targets in this run."
    lines = ["Targets missed in this run:", ""] + [f"- {m}" for m in missed]
    if any("token_counter=len" in m for m in missed):
        trim_rows = [r for r in rows if r["case"].startswith("TRIM") and "same token counter" in r["case"]]
        floors = [r["ours"] / r["floor"] for r in trim_rows]
        speedups = [r["lc"] / r["ours"] for r in trim_rows]
        lines += [
            "",
            "The `token_counter=len` TRIM comparison cannot reach 3×: LangChain then touches no message content,",
            "while memoryboard's result carries `tokens_before`, which needs one pass over every message (the",
            f"floor). memoryboard TRIM stays within {min(floors):.1f}–{max(floors):.1f}× of that floor, and is "
            f"{min(speedups):.1f}–{max(speedups):.1f}× faster",
            "than `trim_messages` given the same token counter.",
        ]
    if any(f"at {SIZES[0]:,} messages" in m and m.endswith("the floor") for m in missed):
        lines += [
            "",
            f"At {SIZES[0]:,} messages the floor runs from the CPU cache (≈0.1 µs a message), so fixed per-call",
            "costs (type check of the input, the index tuples of the result) weigh more against it.",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-write", action="store_true", help="print only, leave README.md alone")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    rows = run(args.quick)
    text = section(rows, load)
    print(text)
    if not args.no_write:
        write_readme_section(README, HEADING, text.rstrip("\n") + "\n\n")
        print(f"written to {README.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
