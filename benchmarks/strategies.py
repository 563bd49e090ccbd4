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
  ``strategy="last"``, with ``token_counter=len`` (LangChain's idiomatic way to count messages), budgets 2
  and 10, concatenated.
* ``floor``: a bare loop that only sums ``len(content)`` over the messages: any strategy that reports the
  tokens of its input must at least do this.

Input conversion (JSON dicts to ``Message``) is measured on its own row.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import statistics
import sys
import timeit
from operator import attrgetter

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages  # noqa: E402

from memoryboard.strategies import Message, Role, sliding_window, to_messages, trim  # noqa: E402

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


def median_ms(fn, target_seconds: float) -> float:
    timer = timeit.Timer(fn)
    once = timer.timeit(number=1)
    number = max(1, int(0.05 / once)) if once < 0.05 else 1
    repeat = max(5, min(25, int(target_seconds / max(once * number, 1e-9))))
    return statistics.median(t / number for t in timer.repeat(repeat=repeat, number=number)) * 1000


def check_same_output(ours, theirs_contents: list[str]) -> None:
    mine = [m.content for m in ours.messages]
    if mine != theirs_contents:
        raise SystemExit(f"{ours.strategy}: outputs differ ({len(mine)} vs {len(theirs_contents)} messages)")


def run(quick: bool) -> list[dict]:
    target = 0.3 if quick else 1.5
    rows_out = []
    for n in SIZES:
        raw = make_conversation(n)
        msgs = list(to_messages(raw))
        lc = to_langchain(raw)
        half = int(lc_token_counter(lc) / 2)

        t_floor = median_ms(lambda: floor(msgs), target)
        t_convert = median_ms(lambda: to_messages(raw), target)
        rows_out.append({"case": "convert JSON dicts → Message", "n": n, "ours": t_convert, "lc": None,
                         "floor": t_floor})

        for budget in (BUDGET, half):
            ours = sliding_window(msgs, max_tokens=budget)
            theirs = trim_messages(lc, max_tokens=budget, token_counter=lc_token_counter, strategy="last")
            check_same_output(ours, [m.content for m in theirs])
            t_ours = median_ms(lambda b=budget: sliding_window(msgs, max_tokens=b), target)
            t_lc = median_ms(
                lambda b=budget: trim_messages(lc, max_tokens=b, token_counter=lc_token_counter, strategy="last"),
                target,
            )
            label = f"SLIDING_WINDOW max_tokens={budget:,}" + (" (½ of input)" if budget == half else "")
            rows_out.append({"case": label, "n": n, "ours": t_ours, "lc": t_lc, "floor": t_floor,
                             "kept": len(ours.messages)})

        def lc_trim():
            head = trim_messages(lc, max_tokens=KEEP_FIRST, token_counter=len, strategy="first")
            tail = trim_messages(lc, max_tokens=KEEP_LAST, token_counter=len, strategy="last")
            return head + tail

        ours = trim(msgs, keep_first=KEEP_FIRST, keep_last=KEEP_LAST)
        check_same_output(ours, [m.content for m in lc_trim()])
        t_ours = median_ms(lambda: trim(msgs, keep_first=KEEP_FIRST, keep_last=KEEP_LAST), target)
        t_lc = median_ms(lc_trim, target)
        rows_out.append({"case": f"TRIM keep_first={KEEP_FIRST} keep_last={KEEP_LAST}", "n": n, "ours": t_ours,
                         "lc": t_lc, "floor": t_floor, "kept": len(ours.messages)})
    return rows_out


def table(rows: list[dict]) -> str:
    lines = [
        "| case | messages | memoryboard ms | trim_messages ms | floor ms | speed-up vs trim_messages | × floor |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lc = "–" if r["lc"] is None else f"{r['lc']:.2f}"
        speedup = "–" if r["lc"] is None else f"{r['lc'] / r['ours']:.1f}×"
        lines.append(
            f"| {r['case']} | {r['n']:,} | {r['ours']:.2f} | {lc} | {r['floor']:.2f} | {speedup} | "
            f"{r['ours'] / r['floor']:.2f} |"
        )
    return "\n".join(lines)


def section(rows: list[dict]) -> str:
    import platform

    return f"""{HEADING}

`.venv/bin/python benchmarks/strategies.py` — context strategies TRIM and SLIDING_WINDOW of
`memoryboard.strategies` against LangChain's `langchain_core.messages.trim_messages` (a benchmark-only
dependency, `requirements-bench.txt`; never imported by memoryboard) and against a floor, in one run.
Median of timeit repeats, in milliseconds (Python {platform.python_version()}, {platform.machine()}).

- Input: a list of our `Message` objects, built beforehand (LangChain gets the same content as
  `SystemMessage`/`HumanMessage`/`AIMessage`). Converting JSON dicts to `Message` is its own row.
- memoryboard builds the full `ContextResult` (output tuple, kept/dropped indexes, tokens before/after).
- SLIDING_WINDOW vs `trim_messages(strategy="last")` with the same budget and the same estimate,
  `len(content) / 2.5 + 4` per message, passed as a `token_counter` over a list (written with `map`, as
  fast as it gets in Python). Both produce the same messages (checked by the script).
- TRIM (first 2 + last 10): LangChain has no first+last mode; the equivalent is two `trim_messages` calls
  (`strategy="first"`, `max_tokens=2` and `strategy="last"`, `max_tokens=10`) with `token_counter=len`,
  LangChain's idiomatic message count, concatenated. This is generous to LangChain: it counts nothing, while
  memoryboard also computes the input's token estimate.
- floor: a bare `for` loop summing `len(content)`: every strategy reporting `tokens_before` must do this.
- Targets: ≥ 3× faster than `trim_messages`, within 3× of the floor.

{table(rows)}
"""


def write_readme(text: str) -> None:
    if README.exists():
        current = README.read_text(encoding="utf-8")
    else:
        current = "# Benchmarks\n\nMeasurements of memoryboard's hot paths; each section is produced by its script.\n"
    start = current.find(HEADING + "\n")
    if start == -1:
        updated = current.rstrip("\n") + "\n\n" + text
    else:
        end = current.find("\n## ", start + len(HEADING))
        updated = current[:start] + text + ("" if end == -1 else current[end:].lstrip("\n").join(["\n", ""]))
    README.write_text(updated, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-write", action="store_true", help="print only, leave README.md alone")
    args = parser.parse_args()
    rows = run(args.quick)
    text = section(rows)
    print(text)
    if not args.no_write:
        write_readme(text)
        print(f"written to {README.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
