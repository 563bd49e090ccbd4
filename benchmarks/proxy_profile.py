"""CPU per request of ``POST /v1/chat/completions`` in one process, and where it goes.

Run: ``.venv/bin/python benchmarks/proxy_profile.py --database-url mysql://root@127.0.0.1:3306/mb_p14``
(``--requests 300``, ``--profile`` for a cProfile listing). The benchmark's own database preparation
(``benchmarks/proxy.py``: users with seeded items) and fake upstream; requests go through Django's WSGI
handler in this process (no HTTP server), so ``time.process_time`` per request is the web process's CPU
(plus the in-process database client), what a gunicorn worker spends. The floor (``GET /api/v1/ping/``) is
measured in the same run. The settings are the product's defaults (``benchmarks.load._env``: no log level or
connection age of its own), the upstream the fake of ``benchmarks/proxy.py`` (extraction answered with valid
JSON); for the same request through gunicorn with ``gunicorn.conf.py``, run ``benchmarks/proxy.py``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import random
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.load import prepare_database  # noqa: E402
from benchmarks.proxy import QUESTIONS, _cpu_of, database_pids, start_fake_upstream  # noqa: E402


def wsgi_call(app, method: str, path: str, body: bytes, token_header: str) -> tuple[str, bytes]:
    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1", "HTTP_AUTHORIZATION": token_header, "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr, "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    status = []

    def start_response(s, headers, exc_info=None):
        status.append(s)

    result = app(environ, start_response)
    data = b"".join(result)
    if hasattr(result, "close"):
        result.close()
    return status[0], data


def time_stages() -> dict[str, float]:
    """Wrap the stages of a proxied request to add up their CPU time (inclusive; the stages do not nest)."""
    import functools
    import importlib

    spent: dict[str, float] = {}

    def wrap(owner, attr: str, name: str) -> None:
        inner = getattr(owner, attr, None)
        if inner is None:  # a stage another version of the code does not have
            return

        @functools.wraps(inner)
        def timed(*a, **kw):
            began = time.process_time()
            try:
                return inner(*a, **kw)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - began

        setattr(owner, attr, timed)

    mod = importlib.import_module
    from memoryboard.shared.authentication import TokenAuthentication
    from memoryboard.llm.chat import OpenAIChatModel
    from memoryboard.llm.factory import get_embedder

    embedder = get_embedder()
    from django.db.backends.base.base import BaseDatabaseWrapper
    from rest_framework.request import Request
    from rest_framework.views import APIView

    from django.db.models import QuerySet

    wrap(QuerySet, "bulk_create", "ORM bulk_create (user row)")
    wrap(QuerySet, "create", "ORM create (owner in claim, assistant row)")
    wrap(BaseDatabaseWrapper, "commit", "commit")
    wrap(APIView, "finalize_response", "DRF finalize_response")
    wrap(Request, "_load_data_and_files", "DRF request body")
    for owner, attr, name in [
        (TokenAuthentication, "authenticate_credentials", "token"),
        (mod("memoryboard.api.openai_views"), "parse_completion_request", "parse request"),
        (mod("memoryboard.agent.completions"), "conversation_rows_of", "conversation claim"),
        (mod("memoryboard.agent.runtime"), "memory_switches", "switches"),
        (mod("memoryboard.ltm.search.retrieval"), "_pause_rules_q", "retrieval: pause rules"),
        (mod("memoryboard.ltm.search.retrieval"), "_candidate_rows", "retrieval: candidates"),
        (embedder, "embed", "retrieval: embed query"),
        (mod("memoryboard.ltm.search.retrieval"), "scope_data", "retrieval: scope data"),
        (mod("memoryboard.ltm.search.ranking"), "score", "retrieval: score"),
        (mod("memoryboard.ltm.search.receipts"), "receipt_record", "retrieval: receipt"),
        (mod("memoryboard.agent.runtime"), "build_system_prompt", "system prompt"),
        (mod("memoryboard.agent.runtime"), "run_before_model_chain", "context chain"),
        (OpenAIChatModel, "complete", "upstream call"),
        (mod("memoryboard.agent.runtime"), "_enqueue_extraction", "extraction filter"),
        (mod("memoryboard.api.openai_views"), "completion_body", "response body"),
        (mod("memoryboard.ltm.search.retrieval"), "memories_by_id", "retrieval: best items"),
        (mod("memoryboard.ltm.search.retrieval"), "memory_log_access", "retrieval: access log"),
        (mod("memoryboard.ltm.search.receipts"), "receipt_build", "retrieval: receipt build"),
    ]:
        wrap(owner, attr, name)
    return spent


# The target for the web process's CPU per proxied turn.
TARGET_MS = 6.0


def print_bound(proxy, floor, *, rounds: int, requests: int) -> None:
    """CPU per turn of what any implementation of the proxied turn pays in the web process, each measured
    in this run, in alternating rounds: the floor request (WSGI, middleware, DRF, token authentication),
    the query's vector (the offline model: the query and its content words), the upstream call through
    the ``openai`` client with the turn's own messages and tools, and the turn's statements as bare
    round trips (``SELECT 1`` on the open connection, one per statement the turn sends)."""
    from django.db import connection

    from memoryboard.llm.chat import OpenAIChatModel
    from memoryboard.llm.factory import get_chat_model, get_embedder
    from memoryboard.ltm.search.ranking import query_vector

    seen: list[str] = []
    captured: list[tuple] = []
    inner = OpenAIChatModel.complete

    def capture(self, messages, *, tools=None):
        captured.append((self, messages, tools))
        return inner(self, messages, tools=tools)

    def record(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    OpenAIChatModel.complete = capture
    try:
        with connection.execute_wrapper(record):
            proxy()
    finally:
        OpenAIChatModel.complete = inner
    statements = len(seen) + 1  # and the commit
    chat_model, messages, tools = captured[0] if captured else (get_chat_model(), [], None)
    embedder = get_embedder()
    questions = [m.get("content", "") for m in messages if m.get("role") == "user"] or ["What do I like?"]
    question = questions[-1]

    def embed():
        query_vector(embedder, question)

    def upstream():
        chat_model.complete(messages, tools=tools)

    def statements_only():
        with connection.cursor() as cursor:
            for _ in range(statements):
                cursor.execute("SELECT 1")
                cursor.fetchall()

    parts = {"floor request": floor, "query vector": embed, "upstream call": upstream,
             f"{statements} bare statements": statements_only}
    spent: dict[str, list[float]] = {name: [] for name in (*parts, "proxy")}
    for _round in range(rounds):
        for name, call in (*parts.items(), ("proxy", proxy)):
            began = time.process_time()
            for _ in range(requests):
                call()
            spent[name].append((time.process_time() - began) * 1000 / requests)
    medians = {name: statistics.median(values) for name, values in spent.items()}
    bound = sum(medians[name] for name in parts)
    print(f"what no implementation of the turn leaves out, CPU ms per turn ({rounds} rounds of {requests}, medians):")
    for name in parts:
        print(f"  {name:<28} {medians[name]:6.2f}")
    print(f"  {'sum (lower bound)':<28} {bound:6.2f}   target {TARGET_MS:.1f}   the proxy today {medians['proxy']:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="mysql://root@127.0.0.1:3306/mb_proxy")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5, help="alternating proxy/floor rounds; medians are reported")
    parser.add_argument("--profile", action="store_true", help="print a cProfile listing of the proxy requests")
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--queries", action="store_true", help="print the SQL of one proxy request")
    parser.add_argument("--stages", action="store_true", help="CPU per request of each stage of a proxied request")
    parser.add_argument("--bound", action="store_true",
                        help="CPU of the parts no implementation of the turn can leave out, against the target")
    args = parser.parse_args()

    upstream, upstream_port = start_fake_upstream()
    os.environ.update({"OPENAI_BASE_URL": f"http://127.0.0.1:{upstream_port}/v1", "OPENAI_API_KEY": "k",
                       "OPENAI_EMBEDDING_MODEL": "", "OPENAI_MAX_RETRIES": "0"})
    try:
        tokens = prepare_database(args.database_url, args.users, args.memories)
        os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{upstream_port}/v1"
        from django.conf import settings

        settings.OPENAI_BASE_URL = os.environ["OPENAI_BASE_URL"]
        from django.core.wsgi import get_wsgi_application

        from memoryboard.llm.factory import reset_models, warm_up

        reset_models()
        warm_up()
        app = get_wsgi_application()
        rng = random.Random(1)

        def proxy():
            body = json.dumps({"model": "chat", "messages": [{"role": "user", "content": rng.choice(QUESTIONS)}]})
            status, data = wsgi_call(app, "POST", "/v1/chat/completions", body.encode(), f"Bearer {rng.choice(tokens)}")
            if not status.startswith("200"):
                raise SystemExit(f"{status} {data[:300]!r}")

        def floor():
            status, data = wsgi_call(app, "GET", "/api/v1/ping/", b"", f"Token {rng.choice(tokens)}")
            if not status.startswith("200"):
                raise SystemExit(f"{status} {data[:300]!r}")

        for _ in range(50):  # every user's vectors cached, connections open
            proxy()
            floor()
        per = {"proxy": [], "floor": []}
        database = {"proxy": [], "floor": []}  # the database server's CPU: shared, an upper bound
        db_pids = database_pids()
        for _round in range(args.rounds):
            for name, call in (("proxy", proxy), ("floor", floor)):
                began, db_began = time.process_time(), _cpu_of(db_pids)
                for _ in range(args.requests):
                    call()
                per[name].append((time.process_time() - began) * 1000 / args.requests)
                database[name].append((_cpu_of(db_pids) - db_began) * 1000 / args.requests)
        for name, values in per.items():
            print(f"{name}: CPU per request median {statistics.median(values):.2f} ms "
                  f"(rounds: {', '.join(f'{v:.2f}' for v in values)}); database server "
                  f"{statistics.median(database[name]):.2f} ms (shared with other work: an upper bound)")
        if args.queries:
            from django.db import connection

            seen = []

            def record(execute, sql, params, many, context):
                seen.append(sql[:400])
                return execute(sql, params, many, context)

            with connection.execute_wrapper(record):
                proxy()
            print(f"{len(seen)} statements in one proxy request:")
            for sql in seen:
                print("  ", sql)
        if args.stages:
            spent = time_stages()
            began = time.process_time()
            for _ in range(args.requests):
                proxy()
            total = (time.process_time() - began) * 1000 / args.requests
            print(f"stages, CPU ms per proxied request ({args.requests} requests, {total:.2f} ms in all):")
            for name, value in spent.items():
                print(f"  {name:<28} {value * 1000 / args.requests:6.2f}")
        if args.bound:
            print_bound(proxy, floor, rounds=args.rounds, requests=args.requests)
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile(time.process_time)  # CPU, not waiting for the database
            profiler.enable()
            for _ in range(args.requests):
                proxy()
            profiler.disable()
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.limit)
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
