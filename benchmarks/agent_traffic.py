"""Benchmark of the context strategy API on agent traffic: OpenAI messages with tool calls, JSON in, JSON out.

Run: ``.venv/bin/python benchmarks/agent_traffic.py`` (``--quick``, ``--readme`` to write its table into
``benchmarks/README.md`` under ``## Strategies on agent traffic``). In process: Django's test client, no server
and no socket, so its "end to end" column is not a figure against LangChain; that one comes from
``benchmarks/context_api.py`` (both through gunicorn with ``gunicorn.conf.py``).

Compared in the same run, on the same JSON body (10k and 100k OpenAI Chat Completions messages, a third of
them assistant messages with one or two parallel tool calls and their ``tool`` results):

* ``memoryboard API``: ``POST /api/v1/strategies/context/sliding_window/apply`` through Django's test client
  (the whole middleware stack, token authentication against the database, the JSON parser and guard, the
  view, the renderer): bytes in, bytes out.
* ``LangChain``: ``json.loads`` → ``convert_to_messages`` → ``trim_messages(strategy="last",
  start_on="human", include_system=True)`` (its own way to never start on an orphan tool result) with the
  same token estimate as a ``token_counter`` → ``convert_to_openai_messages`` → ``json.dumps``.
* in process: our SLIDING_WINDOW on already-read messages, against the floor (a bare loop summing the
  characters the estimate needs: content plus tool-call names and arguments).

Every contender is timed with the garbage collector on (timeit turns it off), round-robin in each run;
``--runs`` (default 5) repeats the whole comparison and the table gives the median and the range of the runs,
with the load average at the start of each.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.sections import write_readme_section  # noqa: E402

README = ROOT / "benchmarks" / "README.md"
HEADING = "## Strategies on agent traffic"
SIZES = (1_000, 10_000, 100_000)
WORDS = ("memory", "context", "token", "agent", "用户", "偏好", "summary", "window", "数据库", "migration")


def make_trace(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = [{"role": "system", "content": "You are a ReAct agent. 你是一个智能体。"}]
    call = 0
    while len(out) < n:
        kind = rng.random()
        if kind < 0.4:
            out.append({"role": "user", "content": " ".join(rng.choices(WORDS, k=rng.randint(3, 60)))})
        elif kind < 0.65:
            out.append({"role": "assistant", "content": " ".join(rng.choices(WORDS, k=rng.randint(3, 80)))})
        else:
            calls = []
            for _ in range(rng.randint(1, 2)):
                call += 1
                args = json.dumps({"query": " ".join(rng.choices(WORDS, k=4))}, ensure_ascii=False, separators=(",", ":"))
                calls.append({"id": f"call_{call}", "type": "function", "function": {"name": "search", "arguments": args}})
            out.append({"role": "assistant", "content": None, "tool_calls": calls})
            for c in calls:
                out.append({"role": "tool", "tool_call_id": c["id"],
                            "content": " ".join(rng.choices(WORDS, k=rng.randint(5, 120)))})
    return out[:n] if out[n - 1].get("role") != "assistant" or "tool_calls" not in out[n - 1] else out[: n - 1]


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")


def lc_token_counter(messages) -> float:
    """The project's estimate over LangChain messages: text, tool-call names and arguments, / 2.5 + 4."""
    chars = 0
    for m in messages:
        chars += len(_text(m.content))
        for call in getattr(m, "tool_calls", ()) or ():
            chars += len(call["name"]) + len(json.dumps(call["args"], ensure_ascii=False, separators=(",", ":")))
    return chars / 2.5 + 4 * len(messages)


def measure(contenders: dict, target_seconds: float) -> dict[str, tuple[float, float]]:
    """Per contender: the median ms per call and the spread of the rounds ((max - min) / median)."""
    from benchmarks.strategies import samples

    out = {}
    for name, values in samples(contenders, target_seconds, gc_on=True).items():
        median = statistics.median(values)
        out[name] = (median * 1000, (max(values) - min(values)) / median)
    return out


def setup_django(directory: str) -> str:
    """Django on a fresh SQLite file with one user and API token; returns the token."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "memoryboard.settings"
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/agent_traffic.sqlite3"
    os.environ.setdefault("MEMORYBOARD_ALLOWED_HOSTS", "testserver")
    os.environ["MEMORYBOARD_DEBUG"] = "0"
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    call_command("migrate", verbosity=0)
    user, _ = User.objects.get_or_create(username="bench")
    return Token.objects.get_or_create(user=user)[0].key


def run(quick: bool, token: str, sizes) -> list[dict]:
    from django.test import Client
    from langchain_core.messages import convert_to_messages, convert_to_openai_messages, trim_messages

    from memoryboard.strategies import read_conversation, sliding_window

    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    path = "/api/v1/strategies/context/sliding_window/apply"
    rows = []
    for n in sizes:
        trace = make_trace(n)
        budget = int(read_conversation(trace).messages and sum(
            m.size for m in read_conversation(trace).messages) / 2.5 / 2)  # half of the input
        for label, max_tokens in (("4,000", 4000), ("½ of input", budget)):
            body = json.dumps({"messages": trace, "params": {"max_tokens": max_tokens}}, ensure_ascii=False).encode()

            def ours():
                response = client.generic("POST", path, body, content_type="application/json")
                assert response.status_code == 200, response.content[:300]
                return response.content

            def langchain():
                data = json.loads(body)
                msgs = convert_to_messages(data["messages"])
                kept = trim_messages(msgs, max_tokens=data["params"]["max_tokens"], token_counter=lc_token_counter,
                                     strategy="last", start_on="human", include_system=True)
                return json.dumps({"messages": convert_to_openai_messages(kept)}, ensure_ascii=False).encode()

            msgs = read_conversation(trace).messages

            def floor():
                total = 0
                for m in msgs:
                    total += len(m.content) + m.extra
                return total

            def window():
                return sliding_window(msgs, max_tokens=max_tokens)

            ours_kept = len(json.loads(ours())["messages"])
            lc_kept = len(json.loads(langchain())["messages"])
            t = measure({"ours": ours, "lc": langchain, "window": window, "floor": floor}, 1.0 if quick else 4.0)
            rows.append({"n": n, "budget": label, "ours": t["ours"], "lc": t["lc"], "window": t["window"],
                         "floor": t["floor"], "ours_kept": ours_kept, "lc_kept": lc_kept, "bytes": len(body)})
    return rows


def table(runs: list[list[dict]]) -> str:
    """Per size and budget: median [min-max] across runs of each column."""

    def cell(values, fmt="{:.1f}"):
        return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"

    lines = [
        "| messages | body | max_tokens | API end to end ms | LangChain ms | speed-up | SLIDING_WINDOW in process ms "
        "| floor ms | kept (ours / LangChain) |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for index, r in enumerate(runs[0]):
        across = [run[index] for run in runs]
        lines.append(
            f"| {r['n']:,} | {r['bytes'] / 1e6:.1f} MB | {r['budget']} | {cell([a['ours'][0] for a in across])} | "
            f"{cell([a['lc'][0] for a in across])} | {cell([a['lc'][0] / a['ours'][0] for a in across], '{:.2f}×')} | "
            f"{cell([a['window'][0] for a in across], '{:.2f}')} | {cell([a['floor'][0] for a in across], '{:.2f}')} | "
            f"{r['ours_kept']:,} / {r['lc_kept']:,} |"
        )
    return "\n".join(lines)


def _load_label(loads: list[float]) -> str:
    """A line saying the table was measured under load, else "": a load average above 1.5 at a run's start
    (the benchmark alone keeps one of the machine's 2 CPUs busy: 1.0 between its own runs)."""
    if max(loads, default=0) <= 1.5:
        return ""
    return (f"\n**Measured under load** (load average {min(loads):.1f}-{max(loads):.1f} at the starts of the runs: "
            "other processes shared the CPUs), not a quiet-machine figure.\n")


def section(runs: list[list[dict]], loads: list[float]) -> str:
    import platform

    return f"""{HEADING}

`.venv/bin/python benchmarks/agent_traffic.py` — the context endpoint on OpenAI messages with tool calls
(issue 11), JSON body in, JSON body out, against LangChain's `trim_messages` on the same body in the same run.
Median of timeit repeats (garbage collector on), contenders timed round-robin, in milliseconds; {len(runs)}
runs, each cell the median [min-max] of the runs (Python {platform.python_version()}, {os.cpu_count()} CPUs;
load average at the start of each run: {", ".join(f"{load:.1f}" for load in loads)}; absolute times are noisy,
the same-run ratios are what to compare).

- Input: a ReAct trace, a third of the messages being assistant tool calls (one or two in parallel, content
  `null`) and their `tool` results.
- memoryboard: `POST /api/v1/strategies/context/sliding_window/apply` through Django's test client with
  token authentication (middleware, parser and JSON guard, view, renderer),
  answering every kept message as it came, the kept/dropped indexes (as ranges when long) and the tokens.
- LangChain: `json.loads`, `convert_to_messages`, `trim_messages(strategy="last", start_on="human",
  include_system=True)` with the same estimate as `token_counter` (text, tool-call names and arguments
  / 2.5 + 4 per message), `convert_to_openai_messages`, `json.dumps`. Its pairing option (`start_on`)
  keeps fewer messages: it must restart at a user turn, where memoryboard restarts at any unit boundary.
- In process: SLIDING_WINDOW on already-read messages against the floor (one loop summing what the token
  estimate reads: content length plus `extra`). memoryboard reads `Message.size`, computed once when the
  message is read (paid inside the end-to-end column), so it can come in under this floor; it also finds
  the window's unit boundary (every result's call inside the window), which the floor does not.
- Targets: end to end ≥ 3× faster than LangChain; in process within 2× of the floor.
{_load_label(loads)}
{table(runs)}

Where the API's time went at 4,000 tokens, and what was cut (each figure measured on this machine under
load 4-8 from other engineers' test runs, old and new code alternated in one session; CPU time where it
says so):

- The guard's check for 19-digit integers was a regex (`re.search(rb"\\d{{19}}")`) over the whole body:
  5 ms of a 0.4 MB body, 35 ms of 3.7 MB, two thirds of parsing. Now `bytes.translate` and a substring
  search: 0.3 ms and 4 ms (`jsonguard._parse_fast`).
- The depth count found escaped quotes in a Python loop (every tool call's `arguments` holds some): now in
  numpy in one pass, 0.7-1.0 → 0.3-0.5 ms on 0.4 MB, 7-13 → 4-7 ms on 3.7 MB (`jsonguard._nesting_depth`).
- The parser decoded the body to text and the guard encoded it back for orjson: now the bytes go through,
  parsing 0.4 MB in 3.1 ms instead of 4.4 ms, 3.7 MB in 63 ms instead of 83 ms (`api.parsers`).
- SLIDING_WINDOW built a `Message` for every message and kept 44: now every message is checked and
  measured, and only the window's are built (`formats.MeasuredConversation`): 1,000 messages 0.83 ms
  instead of 1.42 ms of CPU, a 10,000-message request 47 ms instead of 65 ms; half of the input, which
  builds half of them again, the same as before within the noise. Bad input is still a 400 naming the
  field, wherever the message is.
- An assistant tool-call message took the reader's general path: now its own fast path, 1.8 µs instead of
  2.6 µs a message.
- The cycle collector ran through the parsed body again and again while it grew (45% of the CPU of a
  100,000-message request): it is paused while the endpoint parses and runs the strategy
  (`api.strategy_requests.collector_paused`, docs/decisions.md). 100,000 messages, CPU: 908 → 510 ms at 4,000 tokens
  (LangChain / API 3.7× → 6.5×), 1,137 → 764 ms at half (5.3× → 7.6×); no change beyond the noise at
  1,000 and 10,000.
- Before / after, this script with one run each, alternated (`main` then this code, twice; load 4.9-6.0):
  1,000 messages 1.44-1.50× → 3.11-3.16× at 4,000 tokens, 2.39-2.53× → 3.62-3.72× at half; 10,000
  messages 2.43-2.65× → 4.90-5.31×, 3.70-3.97× → 6.61-7.60×.
- Left at 1,000 messages and 4,000 tokens, about 6 ms of CPU under load 5: orjson 1.3 ms, the depth and
  number scans 0.6-0.8 ms, checking and measuring 0.8 ms, detecting the format 0.17 ms, and about 1.2 ms
  that does not depend on the body (Django's middleware, DRF, the token query, and 0.25-0.35 ms for the
  user's strategy slot: five statements on the shared database cache). Looked at and left: skipping DRF's
  content negotiation (about 0.05 ms), writing the answer from slices of the raw body (rendering the
  answer takes 0.05 ms), one combined numpy pass for both scans (0.67 ms against 0.63 ms).
"""


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--readme", action="store_true", help="write the table into benchmarks/README.md")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default=",".join(str(n) for n in SIZES))
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as directory:
        token = setup_django(directory)
        runs, loads = [], []
        for number in range(args.runs):
            loads.append(os.getloadavg()[0])
            runs.append(run(args.quick, token, sizes))
            print(f"run {number + 1}: load {loads[-1]:.1f}; " + ", ".join(
                f"{r['n']:,}/{r['budget']}: {r['lc'][0] / r['ours'][0]:.2f}×" for r in runs[-1]), flush=True)
    text = section(runs, loads)
    print(text)
    if args.readme:
        write_readme_section(README, HEADING, text.rstrip("\n") + "\n\n")


if __name__ == "__main__":
    main()
