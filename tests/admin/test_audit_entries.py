"""An honest audit log: one entry per thing that happened, labelled by it, with the reason staff typed."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from memoryboard.ltm.store.states import memory_state
from memoryboard.models import AuditLog, LongTermMemory, MemoryStateChange
from tests.admin.conftest import change_url, changelist_url

pytestmark = pytest.mark.django_db


def _item_form(memory, action: str, **extra) -> dict:
    return {"action": action, "_selected_action": memory.pk, "index": 0, "select_across": 0, "_from_item": 1, **extra}


def test_archive_from_the_item_page_asks_for_a_reason_and_the_log_shows_it(login, support_user, alice, make_memory):
    memory = make_memory(alice, "prefers tea")
    client = login(support_user)
    confirm = client.post(changelist_url(), _item_form(memory, "archive_selected"))
    assert 'name="reason"' in confirm.content.decode()
    done = client.post(changelist_url(), _item_form(memory, "archive_selected", confirm="yes",
                                                    reason="  Asked by the user in ticket 4411  "))
    assert done.status_code == 302
    entry = AuditLog.objects.exclude(action="create").get()
    assert (entry.action, entry.object_id, entry.reason, entry.details) == ("archive", memory.pk, "staff", {"note": "Asked by the user in ticket 4411"})
    change = MemoryStateChange.objects.get(memory_id=memory.pk)
    assert (change.reason, change.details) == ("staff", {"note": "Asked by the user in ticket 4411"})
    assert entry.reason_label == "Archived by support: “Asked by the user in ticket 4411”"
    log = client.get(reverse("admin:memoryboard_auditlog_changelist"))
    assert "Asked by the user in ticket 4411" in log.content.decode()
    assert [e.action for e in log.context["cl"].result_list if e.action != "create"] == ["archive"]
    assert "Asked by the user in ticket 4411" in client.get(change_url(memory)).content.decode()

    # Restore: one entry, labelled as a restore (not a second "bulk" entry with the archive's reason).
    client.post(changelist_url(), _item_form(memory, "restore_selected", confirm="yes"))
    assert list(AuditLog.objects.exclude(action="create").order_by("id").values_list("action", flat=True)) == ["archive", "restore"]
    log = client.get(reverse("admin:memoryboard_auditlog_changelist"))
    shown = [(e.action, e.reason_label) for e in log.context["cl"].result_list if e.action != "create"]
    assert shown == [("restore", ""), ("archive", "Archived by support: “Asked by the user in ticket 4411”")]


def test_restore_and_pause_do_not_ask_for_a_reason(login, support_user, alice, make_memory):
    memory = make_memory(alice, "prefers tea", archived_reason="staff")
    page = login(support_user).post(changelist_url(), _item_form(memory, "restore_selected")).content.decode()
    assert 'name="reason"' not in page


def test_a_reason_that_is_too_long_archives_nothing(login, support_user, alice, make_memory):
    memory = make_memory(alice, "prefers tea")
    client = login(support_user)
    client.post(changelist_url(), _item_form(memory, "archive_selected", confirm="yes", reason="x" * 201))
    assert not LongTermMemory.objects.get(pk=memory.pk).archived and not AuditLog.objects.exclude(action="create").exists()


def test_api_archive_takes_a_reason(support_user, alice, make_memory):
    memory = make_memory(alice, "prefers tea")
    api = APIClient()
    api.force_authenticate(support_user)
    url = f"/api/v1/memories/{memory.pk}/archive/"
    for body in ({"reason": 5}, {"reason": "x" * 201}, {"why": "no"}):
        response = api.post(url, body, format="json")
        assert response.status_code == 400, response.content
        assert set(response.json()["error"]["fields"]) == set(body), response.json()
    assert not LongTermMemory.objects.get(pk=memory.pk).archived
    response = api.post(url, {"reason": "Duplicate of a newer item"}, format="json")
    assert response.status_code == 200 and response.json()["archived_reason"] == "staff"
    assert list(AuditLog.objects.exclude(action="create").values_list("action", "reason", "details")) == [("archive", "staff", {"note": "Duplicate of a newer item"})]
    other = make_memory(alice, "likes jazz")
    assert api.post(f"/api/v1/memories/{other.pk}/archive/").status_code == 200  # the body stays optional
    assert AuditLog.objects.exclude(action="create").get(object_id=other.pk).reason == "staff"


def test_bring_all_back_writes_one_entry_per_item(login, alice, make_memory):
    items = [make_memory(alice, f"fact {i}") for i in range(2)]
    web = login(alice)
    web.post("/me/memories/delete-all/", {"confirm": "True"})
    batch = AuditLog.objects.get(object_type="memory_delete_batch").object_id
    before = AuditLog.objects.count()
    web.post(f"/me/memories/undo/{batch}/")
    added = AuditLog.objects.order_by("id")[before:]
    assert sorted((e.action, e.object_id) for e in added) == sorted(("restore", m.pk) for m in items)


def test_merge_labels_the_merged_items(support_user, alice, make_memory):
    from django.utils import translation

    from memoryboard.ltm.write.staff import memory_merge

    keep, other = make_memory(alice, "likes tea"), make_memory(alice, "likes green tea")
    memory_merge(keep=keep, others=[other], actor=support_user)
    archived = AuditLog.objects.get(action="archive")
    with translation.override("en"):
        assert archived.reason_label == "Merged into another item"
    merged = LongTermMemory.objects.get(pk=other.pk)
    assert merged.archived_reason == "merged" and merged.value_json["mergedInto"] == keep.pk
    assert memory_state(merged) == "archived"


def test_developers_read_a_reasons_ids_support_reads_words(login, support_user, developer, alice, make_memory):
    from django.urls import reverse

    from memoryboard.ltm.store.items import memory_restore
    from memoryboard.models import ArchivedReason

    old = make_memory(alice, "likes green tea", archived_reason=ArchivedReason.STAFF)
    twin = make_memory(alice, "likes green tea")
    # A restore that finds the same item in use records which one: an id, in the reason's details.
    memory_restore(memory=old, actor=support_user)
    url = reverse("admin:memoryboard_longtermmemory_change", args=[old.pk])
    support_page = login(support_user).get(url).content.decode()
    developer_page = login(developer).get(url).content.decode()
    assert "Not restored: the same item is in use" in support_page and f"id: {twin.pk}" not in support_page
    assert f"id: {twin.pk}" in developer_page
