"""gunicorn settings for the web process: ``gunicorn -c gunicorn.conf.py memoryboard.wsgi``.

One model per host: ``preload_app`` imports ``memoryboard.wsgi`` in the master, which loads the offline
embedder (``llm.factory.warm_up``) before the workers are forked; they share its pages copy-on-write
instead of loading one copy each (``benchmarks/worker_rss.py`` reports the RSS and PSS per worker).

Threaded workers (``gthread``): an agent turn or a ``/v1`` request waits seconds on the model, which would
hold a sync worker for the whole time; a thread waiting on the network leaves the others running.
Every setting can be overridden by an environment variable (below) or on gunicorn's command line.

| variable | default |
|---|---|
| ``MEMORYBOARD_BIND`` | ``127.0.0.1:8000`` |
| ``MEMORYBOARD_WEB_WORKERS`` | the number of CPUs |
| ``MEMORYBOARD_WEB_THREADS`` | 8 per worker |
| ``MEMORYBOARD_WEB_PRELOAD`` | 1 (0: each worker loads its own model, e.g. to compare) |
| ``MEMORYBOARD_WEB_TIMEOUT`` | 120 s (a silent worker is restarted; a model call may take ``OPENAI_TIMEOUT_SECONDS`` × retries) |

Each worker starts, once it has loaded the application, the staff-search index follower and the expiry
sweep's schedule (``post_worker_init``, ``memoryboard.background``); the master never does: it forks.

Per-worker memory besides the shared model: the scope cache (``MEMORYBOARD_VECTOR_CACHE_MB``) and
Python's own heap; ``MEMORYBOARD_WEB_MAX_REQUESTS`` (default 0: never) recycles a worker after that many
requests.
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = os.environ.get("MEMORYBOARD_BIND", "127.0.0.1:8000")
workers = _int("MEMORYBOARD_WEB_WORKERS", os.cpu_count() or 1)
worker_class = "gthread"
threads = _int("MEMORYBOARD_WEB_THREADS", 8)
preload_app = os.environ.get("MEMORYBOARD_WEB_PRELOAD", "1") != "0"
timeout = _int("MEMORYBOARD_WEB_TIMEOUT", 120)
graceful_timeout = 30
keepalive = 5
max_requests = _int("MEMORYBOARD_WEB_MAX_REQUESTS", 0)
max_requests_jitter = max_requests // 10
wsgi_app = "memoryboard.wsgi"


def pre_fork(server, worker):
    """No database connection crosses the fork (the preloaded app may have opened one)."""
    from django.db import connections

    connections.close_all()


def post_worker_init(worker):
    """Each worker follows the staff-search index log and schedules the expiry sweep from its start
    (``memoryboard.background``), once it has loaded the application; the master never does: it forks."""
    from memoryboard.background import start_background_work

    start_background_work()
