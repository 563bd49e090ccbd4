"""The embedded default (a SQLite file, gunicorn with the repository's gunicorn.conf.py) with 8 agent turns
waiting 2 s each on the model: sign-in, pause, resume and edit stay fast and never answer 500.

A live server in its own processes (``benchmarks/slow_turns.py``, run small), whatever ``DATABASE_URL``
the suite runs on: the case is SQLite's one write lock.
"""

from __future__ import annotations

import pathlib

import pytest

from benchmarks.slow_turns import (
    percentile,
    prepare,
    run_contention,
    server_env,
    start_fake,
    start_web,
    summarize,
)
from tests.ports import free_port

TURNS = 8
MODEL_SECONDS = 2.0


@pytest.fixture(scope="module")
def live_sqlite_server(tmp_path_factory):
    directory = pathlib.Path(tmp_path_factory.mktemp("slow-turns"))
    fake, fake_port = start_fake(MODEL_SECONDS)
    env = server_env(directory / "db.sqlite3", fake_port, {
        "MEMORYBOARD_EMBEDDER": "hashing", "MEMORYBOARD_WEB_WORKERS": "2", "MEMORYBOARD_WEB_THREADS": "8"})
    web = None
    try:
        users = prepare(directory, 3, env)
        port = free_port()
        web = start_web(env, port)
        yield port, users
    finally:
        for proc in (web, fake):
            if proc is not None:
                proc.terminate()
                proc.wait(30)


def _pooled_p95(samples, kinds) -> float:
    return percentile([s[2] for s in samples if s[0] in kinds], 0.95)


def test_other_writes_do_not_wait_for_the_model_of_slow_turns(live_sqlite_server):
    port, users = live_sqlite_server
    # Their own cost (a sign-in hashes the password: CPU, slow on a busy machine) is measured without turns.
    floor_samples = run_contention(port, users, 0, seconds=2 * MODEL_SECONDS)
    samples = run_contention(port, users, TURNS, seconds=4 * MODEL_SECONDS)
    summary, floor = summarize(samples), summarize(floor_samples)
    assert summary["chat"]["statuses"] == {"200": summary["chat"]["n"]}, summary["chat"]
    assert summary["chat"]["n"] >= TURNS
    for kind in ("login", "pause", "resume", "edit"):
        assert summary[kind]["n"] >= 2, summary
        # Redirects after the form posts; before, these answered 500 "database is locked" or took 12-20 s.
        assert summary[kind]["statuses"] == {"302": summary[kind]["n"]}, (kind, summary[kind])
    # Pooled, so that one request slowed by a busy machine (not by the lock) is not the p95 on its own.
    writes = ("pause", "resume", "edit")
    assert _pooled_p95(samples, writes) < _pooled_p95(floor_samples, writes) + 1.0, (summary, floor)
    assert summary["login"]["p50"] < floor["login"]["p95"] + 1.0, (summary["login"], floor["login"])
