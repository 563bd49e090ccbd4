"""Undo, restore ("Bring all back") and import never make a second copy of an item: an item with the same
content in the same scope is the same item, whatever its state."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from memoryboard.ltm.store.items import (
    memory_archive,
    memory_delete_for_user,
    memory_restore,
    memory_restore_for_user,
)
from memoryboard.ltm.write.importing import memory_import
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory, MemoryStateChange

pytestmark = pytest.mark.django_db

IMPORT = "/api/v1/memories/import"


def in_use(user) -> list[str]:
    """The contents of the user's items in use (what retrieval reads), with repeats."""
    return sorted(m.content for m in LongTermMemory.objects.filter(archived=False)
                  if m.namespace.endswith(f'"user:{user.pk}","memories"]'))


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_delete_all_import_the_export_then_bring_all_back_leaves_one_copy(login, alice, make_memory):
    # The sequence, through the pages and the API a user uses.
    make_memory(alice, "User is a data engineer at a fintech startup")
    make_memory(alice, "Prefers short answers", memory_type="PREFERENCE")
    web = login(alice)
    exported = json.loads(web.get("/me/memories/export/").content)
    web.post("/me/memories/delete-all/", {"confirm": "True"})
    assert in_use(alice) == []
    batch = AuditLog.objects.get(object_type="memory_delete_batch").object_id

    applied = _api(alice).post(IMPORT, {"items": exported["memories"], "dry_run": False}, format="json")
    assert applied.status_code == 200 and applied.json()["restored"] == 2 and applied.json()["new"] == 0
    undo = web.post(f"/me/memories/undo/{batch}/")
    assert undo.status_code == 302

    assert in_use(alice) == ["Prefers short answers", "User is a data engineer at a fintech startup"]
    assert LongTermMemory.objects.count() == 2  # no copy was made at all

    # A chat turn retrieves the item once.
    reply = _api(alice).post("/api/v1/agents/chat/chat", {"message": "Where does the user work? data engineer fintech"},
                             format="json")
    assert reply.status_code == 200, reply.content
    used = [m["content"] for m in reply.json()["memories_used"]]
    assert used.count("User is a data engineer at a fintech startup") == 1


def test_undo_of_a_delete_when_the_same_item_came_back_meanwhile(alice, make_memory):
    old = make_memory(alice, "Likes green tea")
    memory_delete_for_user(memory=old, actor=alice)
    new = make_memory(alice, "likes green tea.")  # saved again (a tool, the API) while the old one was deleted
    memory_restore_for_user(memory=old, actor=alice)

    old.refresh_from_db()
    assert in_use(alice) == ["likes green tea."]
    assert old.archived_reason == ArchivedReason.SUPERSEDED and old.superseded_by == new.pk
    entries = list(AuditLog.objects.filter(object_id=old.pk).order_by("id").values_list("action", flat=True))
    assert entries == ["create", "delete", "archive"]  # one entry for the undo, saying what happened
    assert MemoryStateChange.objects.filter(memory_id=old.pk).order_by("id").last().new_state == "superseded"


def test_staff_restore_of_an_archived_copy_keeps_one_in_use(support_user, alice, make_memory):
    archived = make_memory(alice, "Works remotely", archived_reason=ArchivedReason.STAFF)
    make_memory(alice, "WORKS REMOTELY")
    response = _api(support_user).post(f"/api/v1/memories/{archived.pk}/restore/")
    assert response.status_code == 200, response.content
    assert in_use(alice) == ["WORKS REMOTELY"]
    assert response.json()["archived_reason"] == "superseded"
    # Once the other copy is gone, the restore brings it back as usual.
    other = LongTermMemory.objects.get(pk__in=[m.pk for m in LongTermMemory.objects.all()
                                               if m.content == "WORKS REMOTELY"])
    memory_archive(memory=other, actor=support_user)
    memory_restore(memory=LongTermMemory.objects.get(pk=archived.pk), actor=support_user)
    assert in_use(alice) == ["Works remotely"]


def test_import_treats_an_item_in_any_state_as_the_same_item(alice, make_memory):
    make_memory(alice, "Archived by staff", archived_reason=ArchivedReason.STAFF)
    make_memory(alice, "Decayed long ago", archived_reason=ArchivedReason.DECAY)
    deleted = make_memory(alice, "Deleted by me")
    memory_delete_for_user(memory=deleted, actor=alice)
    make_memory(alice, "Still in use")
    items = [{"content": c} for c in ("archived by staff", "Decayed long ago!", "deleted by me", "Still in use",
                                       "Something new", "Something new")]
    summary = memory_import(items=items, user_id=str(alice.pk), actor=alice, dry_run=False)
    assert (summary.new, summary.duplicate, summary.restored) == (1, 4, 1)
    assert in_use(alice) == ["Deleted by me", "Something new", "Still in use"]
    assert LongTermMemory.objects.count() == 5
