"""Versions of an item's text and type: every write path records one, history reads them, revert goes back."""

from __future__ import annotations

import json

import pytest

from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.edits import VersionNotFound, memory_revert
from memoryboard.ltm.store.versions import memory_history
from memoryboard.models import AuditLog, LongTermMemory, MemoryVersion

pytestmark = pytest.mark.django_db


def _versions(memory):
    return list(MemoryVersion.objects.filter(memory_id=memory.pk).order_by("version")
                .values_list("version", "event", "before_content", "after_content", "after_type"))


def test_creation_is_version_one_and_each_edit_the_next(alice, support_user, make_memory):
    memory = make_memory(alice, "User lives in Shanghai")
    memory_update(memory=memory, actor=alice, content="User lives in Berlin")
    memory_update(memory=memory, actor=support_user, memory_type="PREFERENCE")
    assert _versions(memory) == [
        (1, "create", None, "User lives in Shanghai", "FACT"),
        (2, "edit", "User lives in Shanghai", "User lives in Berlin", "FACT"),
        (3, "edit", "User lives in Berlin", "User lives in Berlin", "PREFERENCE"),
    ]
    history = memory_history(memory=memory)
    assert [h.who for h in history] == ["the agent", "alice", "sam-support"]  # the tools saved it


def test_an_edit_that_changes_nothing_is_no_version(alice, make_memory):
    memory = make_memory(alice, "User lives in Berlin")
    memory_update(memory=memory, actor=alice, content="  User lives in Berlin ")
    assert len(_versions(memory)) == 1


def test_the_display_name_comes_from_the_user_directory(bob_named, make_memory):
    memory = make_memory(bob_named, "User likes tea")
    memory_update(memory=memory, actor=bob_named, content="User likes green tea")
    assert memory_history(memory=memory)[-1].who == "Bob Builder"


def test_revert_is_a_new_version_and_audited(alice, support_user, make_memory):
    memory = make_memory(alice, "User lives in Shanghai")
    memory_update(memory=memory, actor=alice, content="User lives in Berlin", memory_type="EPISODE")
    memory = memory_revert(memory=memory, actor=support_user, version=1)
    assert (memory.content, memory.memory_type) == ("User lives in Shanghai", "FACT")
    assert LongTermMemory.objects.get(pk=memory.pk).content == "User lives in Shanghai"
    assert _versions(memory)[-1] == (3, "revert", "User lives in Berlin", "User lives in Shanghai", "FACT")
    entry = AuditLog.objects.filter(object_id=memory.pk, action="update").first()
    assert (entry.reason, entry.details) == ("revert", {"version": 1}) and entry.actor == support_user
    assert memory_history(memory=memory)[-1].reason_words == "Reverted to version 1"


@pytest.mark.parametrize("version", [0, 7, -1, "x", None])
def test_revert_to_an_unknown_version_names_the_field(alice, make_memory, version):
    memory = make_memory(alice, "User lives in Shanghai")
    memory_update(memory=memory, actor=alice, content="User lives in Berlin")
    with pytest.raises(VersionNotFound) as exc:
        memory_revert(memory=memory, actor=alice, version=version)
    assert exc.value.field == "version"
    assert LongTermMemory.objects.get(pk=memory.pk).content == "User lives in Berlin"


def test_an_item_older_than_the_history_gets_its_original_text_as_version_one(alice, make_memory):
    memory = make_memory(alice, "User lives in Shanghai")
    MemoryVersion.objects.all().delete()  # as stored before versions were kept (or by the platform)
    assert [(h.version, h.after_content) for h in memory_history(memory=memory)] == [(1, "User lives in Shanghai")]
    memory_update(memory=memory, actor=alice, content="User lives in Berlin")
    assert [v[:2] for v in _versions(memory)] == [(1, "create"), (2, "edit")]
    memory_revert(memory=memory, actor=alice, version=1)
    assert LongTermMemory.objects.get(pk=memory.pk).content == "User lives in Shanghai"


def test_extraction_and_import_record_version_one(openai_settings, alice, settings):
    from memoryboard.agents_config import parse_agents_config
    from memoryboard.ltm.write.extraction import memory_extract_and_save
    from memoryboard.ltm.write.importing import memory_import

    openai_settings.push_reply(content=json.dumps([{"type": "FACT", "content": "User is a data engineer"}]))
    from unittest import mock

    config = parse_agents_config({"agent": {"agents": {
        "chat": {"long-term-memory": {"enabled": True, "namespace": "chat"}}}}})
    with mock.patch("memoryboard.ltm.write.extraction.get_agents_config", return_value=config):
        saved = memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1",
                                        conversation=[{"role": "user", "content": "I'm a data engineer at a bank."}])
    assert [v[:2] for v in _versions(saved[0])] == [(1, "extract")]
    memory_import(items=[{"content": "User likes hiking"}], user_id=str(alice.pk), actor=alice, dry_run=False)
    imported = LongTermMemory.objects.get(value_json__content="User likes hiking")
    assert [v[:2] for v in _versions(imported)] == [(1, "import")]
    assert memory_history(memory=imported)[0].who == "alice"


def test_a_failed_write_leaves_no_version(alice, make_memory, monkeypatch):
    memory = make_memory(alice, "User lives in Shanghai")
    import memoryboard.ltm.write.edits as services

    def boom(*args, **kwargs):
        raise RuntimeError("audit failed")

    monkeypatch.setattr(services, "audit_record", boom)
    with pytest.raises(RuntimeError):
        memory_update(memory=memory, actor=alice, content="User lives in Berlin")
    assert len(_versions(memory)) == 1
    assert LongTermMemory.objects.get(pk=memory.pk).content == "User lives in Shanghai"


def test_history_of_namespace_items_is_per_item(alice, bob, make_memory):
    a = make_memory(alice, "User lives in Shanghai")
    b = make_memory(bob, "User lives in Paris")
    memory_update(memory=a, actor=alice, content="User lives in Berlin")
    assert [h.version for h in memory_history(memory=b)] == [1]


def test_purging_an_item_removes_its_versions(alice, make_memory):
    from datetime import timedelta

    from django.utils import timezone

    from memoryboard.ltm.store.items import memory_delete_for_user, memory_purge_deleted

    memory = make_memory(alice, "User lives in Shanghai")
    memory_update(memory=memory, actor=alice, content="User lives in Berlin")
    memory_delete_for_user(memory=memory, actor=alice)
    LongTermMemory.objects.filter(pk=memory.pk).update(archived_at=timezone.now() - timedelta(days=400))
    memory_purge_deleted(dry_run=False)
    assert not MemoryVersion.objects.filter(memory_id=memory.pk).exists()
