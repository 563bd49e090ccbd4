"""Item limit, decay and cleanup: formula, dry runs, idempotence, archive-never-delete, restore."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from memoryboard.ltm.store.lifecycle import memory_cleanup, memory_decay, memory_enforce_limit
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.store.items import memory_restore
from memoryboard.models import AuditLog, LongTermMemory, MemoryStateChange

pytestmark = pytest.mark.django_db


def set_fields(memory, **fields):
    LongTermMemory.objects.filter(pk=memory.pk).update(**fields)
    memory.refresh_from_db()
    return memory


def test_enforce_limit_archives_the_lowest_scored(alice, bob, make_memory):
    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    items = [make_memory(alice, f"fact number {i}") for i in range(5)]
    for item, score in zip(items, [0.9, 0.1, 0.5, 0.05, 0.7], strict=True):
        set_fields(item, relevance_score=score)
    make_memory(bob, "bob's item")  # another namespace: never counted

    archived = memory_enforce_limit(namespace=ns, max_items=3)

    assert set(archived) == {items[1].pk, items[3].pk}
    assert LongTermMemory.objects.filter(namespace=ns.as_text(), archived=False).count() == 3
    assert set(LongTermMemory.objects.filter(archived=True).values_list("archived_reason", flat=True)) == {"over_limit"}
    assert AuditLog.objects.filter(action="archive", reason="over_limit").count() == 2
    assert MemoryStateChange.objects.filter(new_state="archived").count() == 2
    assert memory_enforce_limit(namespace=ns, max_items=3) == []


def test_decay_formula(alice, make_memory):
    now = timezone.now()
    fresh = set_fields(make_memory(alice, "fresh"), created_at=now - timedelta(hours=5))
    old = set_fields(make_memory(alice, "old"), created_at=now - timedelta(days=10, hours=3))
    used = set_fields(make_memory(alice, "used"), created_at=now - timedelta(days=40),
                      last_accessed_at=now - timedelta(days=2), relevance_score=0.5)

    changes = memory_decay(now=now, decay_factor=0.9, dry_run=False)

    assert {pk for pk, _, _ in changes} == {old.pk, used.pk}
    old.refresh_from_db(), used.refresh_from_db(), fresh.refresh_from_db()
    assert old.relevance_score == pytest.approx(0.9**10)
    assert used.relevance_score == pytest.approx(0.5 * 0.9**2)
    assert fresh.relevance_score == 1.0


def test_decay_dry_run_writes_nothing_and_runs_are_idempotent(alice, make_memory):
    now = timezone.now()
    item = set_fields(make_memory(alice, "old"), created_at=now - timedelta(days=3))
    preview = memory_decay(now=now, decay_factor=0.5, dry_run=True)
    assert preview == [(item.pk, 1.0, 0.125)]
    item.refresh_from_db()
    assert item.relevance_score == 1.0 and not AuditLog.objects.filter(object_type="job").exists()

    assert memory_decay(now=now, decay_factor=0.5, dry_run=False) == preview
    assert memory_decay(now=now + timedelta(hours=10), decay_factor=0.5, dry_run=False) == []  # same day
    item.refresh_from_db()
    assert item.relevance_score == 0.125
    # Run daily for two more days: the result is the formula for five days, not a compounding of it.
    memory_decay(now=now + timedelta(days=1), decay_factor=0.5, dry_run=False)
    memory_decay(now=now + timedelta(days=2), decay_factor=0.5, dry_run=False)
    item.refresh_from_db()
    assert item.relevance_score == pytest.approx(0.5**5)
    assert AuditLog.objects.filter(object_type="job", object_id="memory_decay").count() == 4


def test_cleanup_archives_restorably_never_deletes(alice, make_memory):
    low = set_fields(make_memory(alice, "low and unused"), relevance_score=0.01, access_count=0)
    set_fields(make_memory(alice, "low but used"), relevance_score=0.01, access_count=5)
    set_fields(make_memory(alice, "high"), relevance_score=0.9)

    assert memory_cleanup(threshold=0.1, min_access=3, dry_run=True) == [low.pk]
    assert not LongTermMemory.objects.filter(archived=True).exists()

    assert memory_cleanup(threshold=0.1, min_access=3, dry_run=False) == [low.pk]
    assert memory_cleanup(threshold=0.1, min_access=3, dry_run=False) == []  # idempotent
    low.refresh_from_db()
    assert low.archived and low.archived_reason == "decay"
    assert LongTermMemory.objects.count() == 3
    memory_restore(memory=low, actor=None)
    low.refresh_from_db()
    assert not low.archived and low.archived_reason is None


def test_commands_are_dry_runs_unless_apply(alice, make_memory, capsys):
    now = timezone.now()
    item = set_fields(make_memory(alice, "old"), created_at=now - timedelta(days=400), access_count=0)

    call_command("memory_decay")
    out = capsys.readouterr().out
    assert "Would decay 1 item(s)" in out and "--apply" in out
    item.refresh_from_db()
    assert item.relevance_score == 1.0

    call_command("memory_decay", "--apply")
    item.refresh_from_db()
    assert item.relevance_score < 0.1
    call_command("memory_decay", "--apply")
    assert "Decayed 0 item(s)" in capsys.readouterr().out.splitlines()[-1]

    call_command("memory_cleanup")
    assert "Would archive 1 item(s)" in capsys.readouterr().out
    item.refresh_from_db()
    assert not item.archived
    call_command("memory_cleanup", "--apply")
    item.refresh_from_db()
    assert item.archived and item.archived_reason == "decay"
    assert AuditLog.objects.filter(object_id=item.pk, action="archive", actor_label="memory_cleanup").exists()


def test_reembed_command(alice, make_memory, capsys):
    from memoryboard.models import MemoryEmbedding

    items = [make_memory(alice, f"fact {i}") for i in range(5)]
    MemoryEmbedding.objects.filter(memory_id__in=[items[0].pk, items[1].pk]).delete()
    call_command("reembed", "--missing-only", "--batch-size", "1", "--no-progress")
    assert "Embedded 2 item(s)" in capsys.readouterr().out
    assert MemoryEmbedding.objects.count() == 5
    MemoryEmbedding.objects.update(vector=b"")
    call_command("reembed", "--batch-size", "2")
    assert "Embedded 5 item(s)" in capsys.readouterr().out
    assert all(len(v) == 384 * 4 for v in MemoryEmbedding.objects.values_list("vector", flat=True))
