"""Concurrent saves of the same update leave one current item (threads, real transactions; MariaDB too)."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db(transaction=True)


def _concurrently(namespace, contents):
    barrier = threading.Barrier(len(contents))
    results, errors = [], []

    def worker(content):
        try:
            barrier.wait()
            results.append(memory_save_reconciled(namespace=namespace, content=content, memory_type="FACT",
                                                  agent_id="chat", source="mcp"))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(c,)) for c in contents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return results


@pytest.mark.parametrize("contents", [
    ["I moved to Berlin"] * 4,
    ["I moved to Berlin", "I now live in Berlin", "I moved to Berlin.", "I live in Berlin now"],
])
def test_concurrent_saves_of_the_same_update_leave_one_current_item(alice, contents):
    namespace = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    shanghai = memory_save_reconciled(namespace=namespace, content="I live in Shanghai", memory_type="FACT",
                                      agent_id="chat").memory
    results = _concurrently(namespace, contents)
    live = list(LongTermMemory.objects.filter(archived=False))
    assert len(live) == 1 and "Berlin" in live[0].content
    assert sorted(r.decision.verdict for r in results) == ["same"] * (len(contents) - 1) + ["update"]
    shanghai.refresh_from_db()
    assert shanghai.archived_reason == "superseded" and shanghai.superseded_by == live[0].pk
    assert LongTermMemory.objects.count() == 2
