"""``manage.py import_memories``: dry run by default, --apply writes, bad rows named, nothing written on error."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from memoryboard.models import AuditLog, LongTermMemory

pytestmark = pytest.mark.django_db


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("import_memories", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_dry_run_then_apply_for_one_user(tmp_path, alice):
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"memories": [
        {"content": "Uses Vim", "type": "PREFERENCE", "agent": "chat", "created_at": "2026-01-02T03:04:05+00:00"},
        {"content": "Old item", "archived": True},
    ]}), encoding="utf-8")
    out, _err = run(str(path), "--user", "alice")
    assert "1 new, 0 duplicate, 0 invalid, 1 archived (skipped); imported 0 (dry run" in out
    assert not LongTermMemory.objects.exists()
    out, _err = run(str(path), "--user", "alice", "--apply")
    memory = LongTermMemory.objects.get()
    assert (memory.content, memory.memory_type, memory.created_at.isoformat()) == (
        "Uses Vim", "PREFERENCE", "2026-01-02T03:04:05+00:00")
    assert memory.namespace == f'["agent:chat","user:{alice.pk}","memories"]'
    assert AuditLog.objects.get(action="bulk", object_type="import").actor_label == "manage.py import_memories"


def test_bad_rows_are_named_and_apply_writes_nothing(tmp_path, alice):
    path = tmp_path / "list.json"
    path.write_text(json.dumps([{"content": "fine"}, {"type": "FACT"}]), encoding="utf-8")
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_memories", str(path), "--user", "alice", "--apply", stdout=io.StringIO(),
                     stderr=(err := io.StringIO()))
    assert "item 1, content: The text is empty: write what to remember." in err.getvalue()
    assert not LongTermMemory.objects.exists()


def test_unreadable_inputs_are_command_errors(tmp_path, alice):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    for args, message in [
        ([str(bad), "--user", "alice"], "Not valid JSON"),
        ([str(tmp_path / "missing.json"), "--user", "alice"], "Cannot read"),
        ([str(bad), "--user", "nobody"], "No user named"),
    ]:
        with pytest.raises(CommandError, match=message):
            run(*args)


def test_the_dry_run_names_what_the_import_replaces(tmp_path, alice, make_memory):
    make_memory(alice, "I moved to Hamburg")
    path = tmp_path / "list.json"
    path.write_text(json.dumps([{"content": "I live in Vienna", "agent": "chat"}]), encoding="utf-8")
    out, _err = run(str(path), "--user", "alice")
    assert "would replace: 'I moved to Hamburg' -> 'I live in Vienna'" in out
    assert LongTermMemory.objects.get().content == "I moved to Hamburg"
    out, _err = run(str(path), "--user", "alice", "--apply")
    assert "replaced: 'I moved to Hamburg' -> 'I live in Vienna'" in out
