"""The context API through a real server against LangChain at its best and a bare-WSGI floor, same bytes.

Run: ``.venv/bin/python benchmarks/context_api.py`` (``--runs 5``, ``--sizes 1000,10000,100000``,
``--seconds 4`` per case and run, ``--env NAME=VALUE`` to override a setting (named in the table),
``--no-write`` to only print). It

1. migrates a fresh SQLite file in a temporary directory and makes one user with an API token;
2. starts three gunicorns, each with the repository's ``gunicorn.conf.py`` at the product's defaults (the
   environment holds only ``DATABASE_URL``, ``MEMORYBOARD_SECRET_KEY`` and ``--env``), on free ports
   (``tests.ports``, ``MEMORYBOARD_TEST_PORTS``):

   * ``api``: memoryboard, ``POST /api/v1/strategies/context/sliding_window/apply`` with the token;
   * ``langchain``: ``benchmarks.peers_wsgi:langchain_app`` (``trim_messages`` with a cached token
     counter, the garbage collector paused like the API's, ``json`` in and out);
   * ``floor``: ``benchmarks.peers_wsgi:floor_app``, a bare WSGI app that parses the body and writes it
     back (``orjson``): what any server of this body pays;

3. posts the same bytes (an OpenAI-format ReAct trace, a third tool calls and results, from
   ``benchmarks/agent_traffic.py``, with ``params.max_tokens`` 4,000 or half of the input) to the three in
   turn, one request at a time, a new connection each, for ``--seconds`` per case, in ``--runs`` runs;
   each run's median per server, then the median [min-max] across runs, with the wall time of each
   request seen by the client and the CPU time of the server's processes (master and workers) per request
   (the API's includes its background threads: the index follower and the expiry sweep).

Targets: API ≥ 2× LangChain at 1,000 messages, ≥ 3× at 10,000 and 100,000 (at 4,000 tokens and at half);
within 2× of the floor at 10,000 and more.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.agent_traffic import make_trace  # noqa: E402
from benchmarks.proxy import _cpu_of, _process_tree  # noqa: E402
from benchmarks.sections import write_readme_section  # noqa: E402
from tests.ports import free_port  # noqa: E402

README = ROOT / "benchmarks" / "README.md"
HEADING = "## Context API through a server"
SIZES = (1_000, 10_000, 100_000)
PATH = "/api/v1/strategies/context/sliding_window/apply"
APPS = {"api": "memoryboard.wsgi", "langchain": "benchmarks.peers_wsgi:langchain_app",
        "floor": "benchmarks.peers_wsgi:floor_app"}
SEED = """
import django, json
django.setup()
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
user = get_user_model().objects.create_user("bench")
print(json.dumps({"token": Token.objects.create(user=user).key}))
"""


def product_env(directory: pathlib.Path, overrides: dict[str, str]) -> dict[str, str]:
    """The environment of the servers: this process's, less every memoryboard setting, plus the database
    file, the secret key (the product refuses to serve without one) and the named overrides."""
    env = {key: value for key, value in os.environ.items()
           if not (key.startswith(("MEMORYBOARD_", "OPENAI_")) or key == "DATABASE_URL")
           or key == "MEMORYBOARD_TEST_PORTS"}
    env.update(DATABASE_URL=f"sqlite:///{directory / 'context_api.sqlite3'}",
               DJANGO_SETTINGS_MODULE="memoryboard.settings",
               MEMORYBOARD_SECRET_KEY="context-api-benchmark-only-" + "0123456789abcdef" * 3)
    env.update(overrides)
    return env


def prepare(env: dict[str, str]) -> str:
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env, check=True)
    done = subprocess.run([sys.executable, "-c", SEED], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["token"]


def start(app: str, env: dict[str, str], timeout: float = 180.0) -> tuple[subprocess.Popen, int]:
    """gunicorn with gunicorn.conf.py serving ``app`` on a free port, once it answers."""
    port = free_port()
    cmd = [str(pathlib.Path(sys.executable).with_name("gunicorn")), "-c", str(ROOT / "gunicorn.conf.py"), app]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**env, "MEMORYBOARD_BIND": f"127.0.0.1:{port}"})
    path = "/api/v1/health/" if app == APPS["api"] else "/"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn serving {app} exited")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return proc, port
        except OSError:
            pass
        time.sleep(0.3)
    proc.terminate()
    raise RuntimeError(f"gunicorn serving {app} did not start")


def settle(pids: list[int], timeout: float = 30.0) -> None:
    """Wait until the servers are idle (their start-up work, e.g. the first expiry sweep, done)."""
    deadline = time.monotonic() + timeout
    before = _cpu_of(pids)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _cpu_of(pids)
        if now - before < 0.02:
            return
        before = now


def post(port: int, body: bytes, headers: dict[str, str]) -> tuple[float, bytes]:
    """Seconds from connecting to the last byte of the answer, and the answer."""
    began = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("POST", PATH, body, headers)
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    elapsed = time.perf_counter() - began
    if response.status != 200:
        raise SystemExit(f"port {port}: HTTP {response.status}: {data[:300]!r}")
    return elapsed, data


def cases(sizes: list[int]) -> list[dict]:
    from memoryboard.strategies import read_conversation

    out = []
    for n in sizes:
        trace = make_trace(n)
        half = int(sum(m.size for m in read_conversation(trace).messages) / 2.5 / 2)
        for label, max_tokens in (("4,000", 4000), ("½ of input", half)):
            body = json.dumps({"messages": trace, "params": {"max_tokens": max_tokens}}, ensure_ascii=False).encode()
            out.append({"n": n, "budget": label, "body": body})
    return out


def run_case(case: dict, servers: dict, token: str, seconds: float) -> dict:
    """Requests to each server in turn (the order rotating) for about ``seconds``; medians per server."""
    headers = {"Content-Type": "application/json", "Authorization": f"Token {token}"}
    names = list(servers)
    kept = {}
    for name in names:  # warm: each worker's first request of this size
        for _ in range(2):
            _, data = post(servers[name]["port"], case["body"], headers)
        kept[name] = len(json.loads(data)["messages"])
    wall = {name: [] for name in names}
    cpu = {name: [] for name in names}
    began, turn = time.monotonic(), 0
    while turn < 3 or (time.monotonic() - began < seconds and turn < 200):
        for name in names[turn % len(names):] + names[:turn % len(names)]:
            pids = servers[name]["pids"]
            cpu_before = _cpu_of(pids)
            elapsed, _ = post(servers[name]["port"], case["body"], headers)
            cpu[name].append(_cpu_of(pids) - cpu_before)
            wall[name].append(elapsed)
        turn += 1
    return {"n": case["n"], "budget": case["budget"], "bytes": len(case["body"]), "kept": kept, "requests": turn,
            **{name: (statistics.median(wall[name]) * 1000, statistics.mean(cpu[name]) * 1000) for name in names}}


def _cell(values: list[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def table(runs: list[list[dict]]) -> str:
    lines = [
        "| messages | body | max_tokens | API ms | LangChain ms | floor ms | API vs LangChain | API / floor "
        "| server CPU ms: API / LangChain / floor | kept (API / LangChain) |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for index, r in enumerate(runs[0]):
        across = [run[index] for run in runs]
        lines.append(
            f"| {r['n']:,} | {r['bytes'] / 1e6:.2f} MB | {r['budget']} | {_cell([a['api'][0] for a in across])} | "
            f"{_cell([a['langchain'][0] for a in across])} | {_cell([a['floor'][0] for a in across])} | "
            f"{_cell([a['langchain'][0] / a['api'][0] for a in across], '{:.2f}×')} | "
            f"{_cell([a['api'][0] / a['floor'][0] for a in across], '{:.2f}')} | "
            f"{statistics.median(a['api'][1] for a in across):.1f} / "
            f"{statistics.median(a['langchain'][1] for a in across):.1f} / "
            f"{statistics.median(a['floor'][1] for a in across):.1f} | "
            f"{r['kept']['api']:,} / {r['kept']['langchain']:,} |"
        )
    return "\n".join(lines)


def verdicts(runs: list[list[dict]]) -> str:
    """Each row against its targets, on the medians across runs."""
    misses = []
    for index, r in enumerate(runs[0]):
        across = [run[index] for run in runs]
        speedup = statistics.median(a["langchain"][0] / a["api"][0] for a in across)
        floor = statistics.median(a["api"][0] / a["floor"][0] for a in across)
        want = 2.0 if r["n"] < 10_000 else 3.0
        if speedup < want:
            misses.append(f"{r['n']:,} / {r['budget']}: {speedup:.2f}× LangChain (target {want:g}×)")
        if r["n"] >= 10_000 and floor > 2.0:
            misses.append(f"{r['n']:,} / {r['budget']}: {floor:.2f}× the floor (target ≤ 2)")
    return "Every target met at the median." if not misses else "Missed: " + "; ".join(misses) + "."


def section(runs: list[list[dict]], loads: list[tuple[float, float]], overrides: dict[str, str], command: str) -> str:
    env = ", ".join(f"`{k}={v}`" for k, v in overrides.items()) or "none (the product's defaults)"
    busy = max(max(pair) for pair in loads) > 1.5
    label = (f"**Smoke, under load** ({min(min(p) for p in loads):.1f}–{max(max(p) for p in loads):.1f} on "
             f"{os.cpu_count()} CPUs: other work ran; only the same-run ratios count), {time.strftime('%Y-%m-%d')}. "
             if busy else f"Quiet, {time.strftime('%Y-%m-%d')}. ")
    return f"""{HEADING}

{label}`{command}`:
`POST {PATH}` (a token) through gunicorn with `gunicorn.conf.py`,
against LangChain at its best (`benchmarks/peers_wsgi.py`: `json`, `convert_to_messages`, `trim_messages(
strategy="last", start_on="human", include_system=True)` with the same estimate as a cached token counter, the
collector paused) and a bare-WSGI floor (`orjson` parse and write), each in its own gunicorn with the same file;
the same bytes (a ReAct trace, a third tool calls and results), one request at a time, servers in turn.
Environment overrides: {env}. {len(runs)} run(s), median [min-max] of the runs' medians, wall ms
per request; server CPU = mean ms per request of the server's processes. Load at the start / end of each run:
{", ".join(f"{a:.1f} / {b:.1f}" for a, b in loads)}. Targets: ≥ 2× LangChain at 1,000 messages, ≥ 3× at
10,000+; ≤ 2× the floor at 10,000+.

{table(runs)}

{verdicts(runs)}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default=",".join(str(n) for n in SIZES))
    parser.add_argument("--seconds", type=float, default=4.0, help="per case, per run")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for all three servers (named in the table)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    overrides = dict(item.split("=", 1) for item in args.env)
    command = " ".join(["benchmarks/context_api.py", *sys.argv[1:]]).replace(" --no-write", "")
    with tempfile.TemporaryDirectory() as directory:
        env = product_env(pathlib.Path(directory), overrides)
        token = prepare(env)
        servers: dict[str, dict] = {}
        try:
            for name, app in APPS.items():
                proc, port = start(app, env)
                servers[name] = {"proc": proc, "port": port}
            time.sleep(1)  # every worker forked
            for server in servers.values():
                server["pids"] = _process_tree(server["proc"].pid)
            settle([pid for server in servers.values() for pid in server["pids"]])
            all_cases = cases(sizes)
            runs, loads = [], []
            for number in range(args.runs):
                load_start = os.getloadavg()[0]
                rows = [run_case(case, servers, token, args.seconds) for case in all_cases]
                loads.append((load_start, os.getloadavg()[0]))
                runs.append(rows)
                print(f"run {number + 1}: load {loads[-1][0]:.1f} → {loads[-1][1]:.1f}; " + "; ".join(
                    f"{r['n']:,}/{r['budget']}: {r['langchain'][0] / r['api'][0]:.2f}× LangChain, "
                    f"{r['api'][0] / r['floor'][0]:.2f}× floor" for r in rows), flush=True)
        finally:
            for server in servers.values():
                server["proc"].terminate()
            for server in servers.values():
                server["proc"].wait(30)
    text = section(runs, loads, overrides, ".venv/bin/python " + command)
    print(text)
    if not args.no_write:
        write_readme_section(README, HEADING, text.rstrip("\n") + "\n\n")


if __name__ == "__main__":
    main()
