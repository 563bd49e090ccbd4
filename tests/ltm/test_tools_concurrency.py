"""Concurrent identical memory_save calls leave one item (threads, real transactions; MariaDB in CI)."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.tools import run_memory_tool
from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8


def _save_concurrently(namespace, contents):
    barrier = threading.Barrier(len(contents))
    results, errors = [], []

    def worker(content):
        try:
            barrier.wait()
            results.append(run_memory_tool(name="memory_save", arguments={"content": content, "type": "FACT"},
                                           namespace=namespace, agent_id="chat"))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(c,)) for c in contents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    return results


def test_concurrent_identical_saves_leave_one_item():
    ns = build_namespace(agent_namespace="chat", user_id="42")
    results = _save_concurrently(ns, ["User is a Rust developer"] * THREADS)
    assert LongTermMemory.objects.filter(namespace=ns.as_text()).count() == 1
    saved = [r for r in results if r.get("saved")]
    assert len(saved) == 1
    assert all(r.get("duplicate_of") == saved[0]["id"] for r in results if not r.get("saved"))


def test_concurrent_overlapping_saves_leave_one_item():
    ns = build_namespace(agent_namespace="chat", user_id="43")
    contents = ["User is a Rust developer", "user is a rust developer.", "User is a Rust developer at Acme",
                "Rust developer"] * 2
    _save_concurrently(ns, contents)
    assert LongTermMemory.objects.filter(namespace=ns.as_text()).count() == 1
