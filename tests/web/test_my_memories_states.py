"""My memories shows every state (issue 12): archived by staff, decay or the limit with the reason, deletable
but not restorable or editable by the user; "delete all" erases exactly what the export lists."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from memoryboard.ltm.store.items import memory_purge_deleted, memory_set_paused
from memoryboard.models import ArchivedReason, LongTermMemory

pytestmark = pytest.mark.django_db


def fresh(memory) -> LongTermMemory:
    return LongTermMemory.objects.get(pk=memory.pk)


def test_archived_items_are_shown_with_their_reason_and_deletable(login, alice, make_memory):
    staff = make_memory(alice, "archived by staff", archived_reason=ArchivedReason.STAFF)
    make_memory(alice, "decayed away", archived_reason=ArchivedReason.DECAY)
    make_memory(alice, "over the limit", archived_reason=ArchivedReason.OVER_LIMIT)
    client = login(alice)
    page = client.get(reverse("my-memories")).content.decode()
    for text in ("archived by staff", "decayed away", "over the limit", "Archived by support on",
                 "Archived by the cleanup job", "keeps at most"):
        assert text in page
    assert reverse("my-memories-restore", args=[staff.pk]) not in page
    assert client.post(reverse("my-memories-restore", args=[staff.pk])).status_code == 404
    assert client.post(reverse("my-memories-delete", args=[staff.pk])).status_code == 302
    assert fresh(staff).archived_reason == ArchivedReason.USER_DELETED


def test_undoing_the_delete_of_a_staff_archive_returns_it_to_the_archive_not_to_active(login, alice, make_memory):
    staff = make_memory(alice, "archived by staff", archived_reason=ArchivedReason.STAFF)
    client = login(alice)
    client.post(reverse("my-memories-delete", args=[staff.pk]))
    client.post(reverse("my-memories-restore", args=[staff.pk]))
    assert (fresh(staff).archived, fresh(staff).archived_reason) == (True, ArchivedReason.STAFF)


def test_api_owner_cannot_undo_a_staff_archive_by_deleting_it_or_edit_it(alice, make_memory):
    api = APIClient()
    api.force_login(alice)
    for reason in (ArchivedReason.STAFF, ArchivedReason.DECAY, ArchivedReason.OVER_LIMIT):
        memory = make_memory(alice, f"archived {reason}", archived_reason=reason)
        patch = api.patch(f"/api/v1/memories/{memory.pk}/", {"content": "changed"}, format="json")
        assert patch.status_code == 403 and fresh(memory).content == f"archived {reason}"
        assert api.post(f"/api/v1/memories/{memory.pk}/restore/").status_code == 403
        assert api.delete(f"/api/v1/memories/{memory.pk}/").status_code == 204
        restored = api.post(f"/api/v1/memories/{memory.pk}/restore/")
        assert restored.status_code == 200
        assert (fresh(memory).archived, fresh(memory).archived_reason) == (True, reason)
        assert api.post(f"/api/v1/memories/{memory.pk}/restore/").status_code == 403


def test_delete_all_erases_everything_the_export_lists(login, alice, bob, make_memory, settings):
    make_memory(alice, "active")
    paused = make_memory(alice, "paused")
    memory_set_paused(memory=paused, actor=alice, paused=True)
    for reason in (ArchivedReason.STAFF, ArchivedReason.DECAY, ArchivedReason.OVER_LIMIT, ArchivedReason.USER_DELETED):
        make_memory(alice, f"archived {reason}", archived_reason=reason)
    bobs = make_memory(bob, "bob's")
    client = login(alice)
    exported = {m["id"] for m in json.loads(client.get(reverse("my-memories-export")).content)["memories"]}
    assert len(exported) == 6
    page = client.get(reverse("my-memories-delete-all")).content.decode()
    assert "Delete 5 of your memories?" in page  # the sixth is deleted already
    client.post(reverse("my-memories-delete-all"))
    assert set(LongTermMemory.objects.filter(archived_reason=ArchivedReason.USER_DELETED)
               .values_list("pk", flat=True)) == exported
    assert not fresh(bobs).archived
    # After the retention period the purge removes all of it.
    LongTermMemory.objects.filter(pk__in=exported).update(archived_at=fresh(bobs).created_at.replace(year=2000))
    memory_purge_deleted(dry_run=False)
    assert json.loads(client.get(reverse("my-memories-export")).content)["memories"] == []
    assert LongTermMemory.objects.filter(pk=bobs.pk).exists()


def _two_days_ago():
    from datetime import timedelta

    from django.utils import timezone

    return (timezone.now() - timedelta(days=2)).replace(microsecond=0)


def _state(memory):
    m = fresh(memory)
    return (m.archived, m.archived_at, m.archived_reason)


def _alice_items(alice, make_memory):
    """A staff-archived, a decay-archived and an active item, the archives dated two days ago."""
    items = [make_memory(alice, "archived by staff", archived_reason=ArchivedReason.STAFF),
             make_memory(alice, "decayed away", archived_reason=ArchivedReason.DECAY),
             make_memory(alice, "still active")]
    when = _two_days_ago()
    LongTermMemory.objects.filter(pk__in=[m.pk for m in items[:2]]).update(archived_at=when)
    return items, when


def _assert_audited_undo(memory, prior_reason):
    """The undo's audit entry and state change say where the item went back to."""
    from memoryboard.models import AuditLog, MemoryStateChange

    entry = AuditLog.objects.filter(object_type="memory", object_id=memory.pk).order_by("-pk").first()
    assert entry.action == AuditLog.Action.RESTORE
    assert entry.before["archived_reason"] == ArchivedReason.USER_DELETED
    assert (entry.after["archived"], entry.after["archived_reason"]) == (prior_reason is not None, prior_reason)
    change = MemoryStateChange.objects.filter(memory_id=memory.pk).order_by("-pk").first()
    assert (change.old_state, change.new_state) == ("deleted", "archived" if prior_reason else "active")


def test_delete_then_undo_one_by_one_restores_exactly_the_prior_state(login, alice, make_memory):
    items, when = _alice_items(alice, make_memory)
    prior = [_state(m) for m in items]
    assert prior == [(True, when, ArchivedReason.STAFF), (True, when, ArchivedReason.DECAY), (False, None, None)]
    client = login(alice)
    for memory, before in zip(items, prior):
        client.post(reverse("my-memories-delete", args=[memory.pk]))
        assert fresh(memory).archived_reason == ArchivedReason.USER_DELETED
        assert fresh(memory).archived_at != before[1]  # the delete time meanwhile (purge counts from it)
        client.post(reverse("my-memories-restore", args=[memory.pk]))
        assert _state(memory) == before
        _assert_audited_undo(memory, before[2])
    assert _state(items[2]) == (False, None, None)
    page = client.get(reverse("my-memories")).content.decode()
    assert "2\xa0days ago" in page or "2 days ago" in page


@pytest.mark.parametrize("how", ["delete all", "bulk selection"])
def test_delete_all_or_bulk_then_undo_restores_each_item_exactly(login, alice, make_memory, how):
    from urllib.parse import parse_qs, urlparse

    items, _when = _alice_items(alice, make_memory)
    prior = [_state(m) for m in items]
    client = login(alice)
    if how == "delete all":
        response = client.post(reverse("my-memories-delete-all"))
    else:
        response = client.post(reverse("my-memories-bulk"), {"action": "delete", "scope": "selected",
                                                              "ids": [m.pk for m in items], "confirm": "True"})
    batch = parse_qs(urlparse(response["Location"]).query)["deleted"][0]
    # "Delete all" takes every state; a bulk delete takes only active and paused items (archives untouched).
    deleted = items if how == "delete all" else items[2:]
    assert [m for m in items if fresh(m).archived_reason == ArchivedReason.USER_DELETED] == deleted
    client.post(reverse("my-memories-undo-batch", args=[batch]))
    assert [_state(m) for m in items] == prior
    for memory, before in zip(items, prior):
        if memory in deleted:
            _assert_audited_undo(memory, before[2])


def test_undo_leaves_a_staff_archive_unrestorable_by_its_user(login, alice, make_memory):
    staff = _alice_items(alice, make_memory)[0][0]
    before = _state(staff)
    client = login(alice)
    client.post(reverse("my-memories-delete", args=[staff.pk]))
    client.post(reverse("my-memories-restore", args=[staff.pk]))
    assert client.post(reverse("my-memories-restore", args=[staff.pk])).status_code == 404
    api = APIClient()
    api.force_login(alice)
    assert api.post(f"/api/v1/memories/{staff.pk}/restore/").status_code == 403
    assert _state(staff) == before
