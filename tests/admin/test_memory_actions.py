"""Archive, restore and re-embed actions (with their confirmation page), edit, add and merge."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from memoryboard.models import AuditLog, LongTermMemory, MemoryEmbedding, MemoryStateChange
from tests.admin.conftest import change_url, changelist_url, run_action

pytestmark = pytest.mark.django_db


def _vector(memory) -> np.ndarray:
    return MemoryEmbedding.objects.get(memory_id=memory.pk).as_array()


def test_archive_asks_for_confirmation_with_count_and_sample(login, support_user, alice, make_memory):
    items = [make_memory(alice, f"fact number {i}") for i in range(12)]
    client = login(support_user)
    response = run_action(client, "archive_selected", [m.pk for m in items], confirm=False)
    assert response.status_code == 200
    page = response.content.decode()
    assert "12 items" in page
    sample = page.split('class="mb-bulk-sample"')[1].split("</table>")[0]
    assert sample.count("fact number") == 10  # a sample of ten
    # and, from the action run and rolled back, what each of the twelve becomes
    outcome = page.split('class="outcome-lost"')[1].split("</ul>")[0]
    assert outcome.count("fact number") == 12 and "Archived" in outcome
    assert "csrfmiddlewaretoken" in page and 'name="confirm" value="yes"' in page
    assert not LongTermMemory.objects.filter(archived=True).exists()


def test_archive_then_restore_is_audited(login, support_user, alice, make_memory):
    items = [make_memory(alice, f"fact {i}") for i in range(3)]
    ids = [m.pk for m in items]
    client = login(support_user)
    response = run_action(client, "archive_selected", ids)
    assert response.status_code == 302
    assert set(LongTermMemory.objects.filter(archived=True, archived_reason="staff").values_list("pk", flat=True)) == set(ids)
    archived = AuditLog.objects.filter(action="archive", actor=support_user)
    assert set(archived.values_list("object_id", flat=True)) == set(ids)
    assert archived.first().before["archived"] is False and archived.first().after["archived"] is True
    assert AuditLog.objects.exclude(action="create").count() == 3  # one entry per item archived, nothing more
    assert MemoryStateChange.objects.filter(new_state="archived", actor=support_user).count() == 3

    # The "archived" view, then a bulk restore.
    page = client.get(changelist_url() + "?state=archived").content.decode()
    assert all(f"fact {i}" in page for i in range(3))
    assert run_action(client, "restore_selected", ids, query="?state=archived").status_code == 302
    assert not LongTermMemory.objects.filter(archived=True).exists()
    assert AuditLog.objects.filter(action="restore", actor=support_user).count() == 3
    assert AuditLog.objects.exclude(action="create").count() == 6
    assert MemoryStateChange.objects.filter(old_state="archived", new_state="active").count() == 3


def test_bulk_by_filter_touches_only_the_filtered_items(login, support_user, alice, bob, make_memory):
    mine = [make_memory(alice, f"alice {i}") for i in range(3)]
    theirs = make_memory(bob, "bob keeps this")
    client = login(support_user)
    response = run_action(client, "archive_selected", [mine[0].pk], query=f"?user={alice.pk}", select_across=True,
                          confirm=False)
    assert "3 items" in response.content.decode()
    run_action(client, "archive_selected", [mine[0].pk], query=f"?user={alice.pk}", select_across=True)
    assert LongTermMemory.objects.filter(archived=True).count() == 3
    theirs.refresh_from_db()
    assert not theirs.archived


def test_reembed_offline(login, support_user, alice, make_memory):
    memory = make_memory(alice, "likes jasmine tea")
    MemoryEmbedding.objects.all().delete()
    client = login(support_user)
    assert run_action(client, "reembed_selected", [memory.pk]).status_code == 302
    assert MemoryEmbedding.objects.filter(memory_id=memory.pk).exists()
    assert AuditLog.objects.filter(action="reembed", object_id=memory.pk, actor=support_user).exists()


def test_reembed_through_the_openai_client(login, support_user, alice, make_memory, openai_settings):
    memory = make_memory(alice, "likes jasmine tea")
    client = login(support_user)
    assert run_action(client, "reembed_selected", [memory.pk]).status_code == 302
    assert openai_settings.embedding_requests
    names = set(MemoryEmbedding.objects.filter(memory_id=memory.pk).values_list("model_name", flat=True))
    assert any(not n.startswith("hashing") for n in names)


@pytest.mark.parametrize("fault", ["http500", "malformed", "timeout"])
def test_reembed_model_failure_writes_nothing(login, support_user, alice, make_memory, openai_settings, fault):
    memory = make_memory(alice, "likes jasmine tea")
    before = AuditLog.objects.count()
    openai_settings.set_fault(fault)
    client = login(support_user)
    response = run_action(client, "reembed_selected", [memory.pk])
    assert response.status_code == 302
    messages = [str(m) for m in client.get(changelist_url()).context["messages"]]
    assert any("embedding model failed" in m for m in messages)
    assert AuditLog.objects.count() == before


def test_edit_content_reembeds_and_audits_before_after(login, support_user, alice, make_memory):
    memory = make_memory(alice, "likes green tea")
    old_vector = _vector(memory)
    client = login(support_user)
    response = client.post(change_url(memory), {"content": "prefers black coffee", "memory_type": "PREFERENCE"})
    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.content == "prefers black coffee" and memory.memory_type == "PREFERENCE"
    assert memory.value_json["agentId"] == "chat"  # the rest of the JSON is kept
    assert not np.allclose(old_vector, _vector(memory))
    entry = AuditLog.objects.get(action="update", object_id=memory.pk)
    assert entry.actor == support_user
    assert entry.before["value_json"]["content"] == "likes green tea"
    assert entry.after["value_json"]["content"] == "prefers black coffee"


def test_edit_rejects_empty_content_and_unknown_type(login, support_user, alice, make_memory):
    memory = make_memory(alice, "likes green tea")
    client = login(support_user)
    response = client.post(change_url(memory), {"content": "   ", "memory_type": "GOSSIP"})
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "content" in errors and "memory_type" in errors
    memory.refresh_from_db()
    assert memory.content == "likes green tea"


def test_edit_model_failure_rolls_back(login, support_user, alice, make_memory, openai_settings):
    memory = make_memory(alice, "likes green tea")
    openai_settings.set_fault("http500")
    client = login(support_user)
    response = client.post(change_url(memory), {"content": "prefers coffee", "memory_type": "FACT"})
    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.content == "likes green tea"
    assert not AuditLog.objects.filter(action="update").exists()


def test_support_adds_a_manual_item(login, support_user, alice):
    client = login(support_user)
    response = client.post(reverse("admin:memoryboard_longtermmemory_add"),
                           {"user_id": str(alice.pk), "agent": "chat", "memory_type": "FACT", "content": "added by hand"})
    assert response.status_code == 302
    memory = LongTermMemory.objects.get()
    assert memory.user_id == str(alice.pk) and memory.source == "manual" and memory.agent_namespace == "chat"
    assert MemoryEmbedding.objects.filter(memory_id=memory.pk).exists()
    assert AuditLog.objects.filter(action="create", actor=support_user, object_id=memory.pk).exists()


def test_change_page_shows_history_access_and_related(login, support_user, alice, bob, make_memory):
    from memoryboard.models import MemoryAccess

    memory = make_memory(alice, "prefers tea in the morning")
    twin = make_memory(alice, "prefers tea in the morning, green")
    foreign = make_memory(bob, "prefers tea in the morning too")  # another user's: never related
    LongTermMemory.objects.filter(pk=memory.pk).update(access_count=14)
    MemoryAccess.objects.bulk_create([
        MemoryAccess(memory_id=memory.pk, agent_id="chat", conversation_id=f"conv-{i}", kind="retrieval", relevance=0.9)
        for i in range(25)
    ])
    client = login(support_user)
    page = client.get(change_url(memory)).content.decode()
    assert "Used 14 times" in page and "The access log holds 25 reads; the latest " in page
    assert "Not read by any agent yet." not in page
    assert "page 1 of 2" in page
    assert "/admin/memoryboard/chatmessage/?conversation_id=conv-" in page
    assert "page 2 of 2" in client.get(change_url(memory) + "?access_page=2").content.decode()
    assert twin.pk in page
    assert foreign.pk not in page
    assert "Audit history" in page and "State history" in page


def test_merge_keeps_one_and_archives_the_others(login, support_user, alice, bob, make_memory):
    keep = make_memory(alice, "prefers tea")
    dup = make_memory(alice, "prefers tea, green")
    foreign = make_memory(bob, "prefers tea")
    client = login(support_user)
    url = reverse("admin:memoryboard_longtermmemory_merge", args=[keep.pk])
    assert client.get(url).status_code == 405
    response = client.post(url, {"merge_ids": [dup.pk, foreign.pk]})
    assert response.status_code == 302
    for m in (keep, dup, foreign):
        m.refresh_from_db()
    assert dup.archived and dup.archived_reason == "merged" and dup.merged_into == keep.pk
    assert not keep.archived and not foreign.archived
    entry = AuditLog.objects.get(action="merge")
    assert entry.object_id == keep.pk and [m["id"] for m in entry.before["merged"]] == [dup.pk]
    assert [s["id"] for s in keep.value_json["mergedFrom"]] == [dup.pk]


def test_developer_cannot_merge(login, developer, alice, make_memory):
    keep = make_memory(alice, "prefers tea")
    dup = make_memory(alice, "prefers tea, green")
    response = login(developer).post(reverse("admin:memoryboard_longtermmemory_merge", args=[keep.pk]),
                                     {"merge_ids": [dup.pk]})
    assert response.status_code == 403
    dup.refresh_from_db()
    assert not dup.archived


def test_pause_and_resume_are_audited(login, support_user, alice, make_memory):
    from memoryboard.models import MemoryFlag

    active = make_memory(alice, "active one")
    archived = make_memory(alice, "archived one", archived_reason="decay")
    client = login(support_user)
    assert run_action(client, "pause_selected", [active.pk, archived.pk]).status_code == 302
    assert list(MemoryFlag.objects.filter(paused=True).values_list("memory_id", flat=True)) == [active.pk]
    assert AuditLog.objects.filter(action="pause", object_id=active.pk, actor=support_user).exists()
    assert list(AuditLog.objects.exclude(action__in=["create", "archive"]).values_list("action", "object_id")) == [
        ("pause", active.pk)]  # one entry: the item paused (the archived one was left alone)
    page = client.get(changelist_url() + "?state=paused").content.decode()
    assert "active one" in page and "archived one" not in page
    assert run_action(client, "resume_selected", [active.pk]).status_code == 302
    assert not MemoryFlag.objects.filter(paused=True).exists()
    assert MemoryStateChange.objects.filter(memory_id=active.pk, old_state="paused", new_state="active").exists()


def test_restore_returns_a_paused_item_paused(login, support_user, alice, make_memory):
    memory = make_memory(alice, "paused then archived")
    client = login(support_user)
    run_action(client, "pause_selected", [memory.pk])
    run_action(client, "archive_selected", [memory.pk])
    run_action(client, "restore_selected", [memory.pk])
    assert MemoryStateChange.objects.filter(memory_id=memory.pk).order_by("-created_at", "-id").first().new_state == "paused"


def test_bulk_over_the_limit_is_refused(login, support_user, alice, make_memory, monkeypatch):
    from memoryboard.admin import memory as memory_admin

    items = [make_memory(alice, f"n{i}") for i in range(3)]
    monkeypatch.setattr(memory_admin, "MAX_BULK_ITEMS", 2)
    client = login(support_user)
    response = run_action(client, "archive_selected", [m.pk for m in items], confirm=False)
    assert response.status_code == 302
    assert not LongTermMemory.objects.filter(archived=True).exists()


def test_change_page_survives_a_failing_embedding_model(login, support_user, alice, make_memory, openai_settings):
    memory = make_memory(alice, "prefers tea")
    make_memory(alice, "prefers tea, green")
    openai_settings.set_fault("http500")
    response = login(support_user).get(change_url(memory))
    assert response.status_code == 200
    assert "Related items are not available" in response.content.decode()


def test_merge_selected_keeps_the_item_used_most_and_carries_its_uses(login, support_user, alice, make_memory):
    used = make_memory(alice, "prefers tea")
    new = make_memory(alice, "prefers green tea")
    LongTermMemory.objects.filter(pk=used.pk).update(access_count=7)
    LongTermMemory.objects.filter(pk=new.pk).update(access_count=2)
    client = login(support_user)
    page = run_action(client, "merge_selected", [used.pk, new.pk], confirm=False).content.decode()
    assert "keep the one used most" in page and "2 items" in page
    run_action(client, "merge_selected", [used.pk, new.pk])
    used.refresh_from_db(), new.refresh_from_db()
    assert new.archived and not used.archived
    assert new.archived_reason == "merged" and new.merged_into == used.pk
    assert used.access_count == 9
    assert used.value_json["mergedFrom"][0]["id"] == new.pk
    assert AuditLog.objects.get(action="merge").object_id == used.pk
    page = client.get(change_url(new)).content.decode()
    assert "Archived by support" not in page and "Merged into" in page


def test_merge_selected_refuses_two_users(login, support_user, alice, bob, make_memory):
    mine, theirs = make_memory(alice, "prefers tea"), make_memory(bob, "prefers tea")
    client = login(support_user)
    run_action(client, "merge_selected", [mine.pk, theirs.pk])
    messages = [str(m) for m in client.get(changelist_url()).context["messages"]]
    assert any("one user at a time" in m for m in messages)
    assert not LongTermMemory.objects.filter(archived=True).exists()


def test_item_page_buttons_confirm_audit_and_come_back(login, support_user, alice, make_memory):
    """Archive / restore / pause / re-embed from an item's page: the bulk actions' confirmation and audit."""
    from memoryboard.models import MemoryFlag

    memory = make_memory(alice, "prefers tea")
    client = login(support_user)
    page = client.get(change_url(memory))
    assert [name for name, _label in page.context["item_actions"]] == [
        "archive_selected", "pause_selected", "reembed_selected"]
    form = {"action": "archive_selected", "_selected_action": memory.pk, "index": 0, "select_across": 0,
            "_from_item": 1}
    confirm = client.post(changelist_url(), form)
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "This action applies to 1 item." in html
    assert 'name="_from_item" value="1"' in html and not LongTermMemory.objects.get(pk=memory.pk).archived
    done = client.post(changelist_url(), {**form, "confirm": "yes"})
    assert done.status_code == 302 and done["Location"] == change_url(memory)
    assert LongTermMemory.objects.get(pk=memory.pk).archived_reason == "staff"
    assert AuditLog.objects.filter(action="archive", object_id=memory.pk).count() == 1
    assert list(AuditLog.objects.exclude(action="create").values_list("action", flat=True)) == ["archive"]  # one entry, no "bulk"
    page = client.get(done["Location"])
    assert [name for name, _label in page.context["item_actions"]] == ["restore_selected"]
    assert "Archived 1 item." in page.content.decode()
    client.post(changelist_url(), {**form, "action": "restore_selected", "confirm": "yes"})
    assert not LongTermMemory.objects.get(pk=memory.pk).archived
    assert list(AuditLog.objects.exclude(action="create").order_by("id").values_list("action", "reason")) == [("archive", "staff"),
                                                                                     ("restore", "")]
    client.post(changelist_url(), {**form, "action": "pause_selected", "confirm": "yes"})
    assert MemoryFlag.objects.get(memory_id=memory.pk).paused
    page = client.get(change_url(memory))
    assert ("resume_selected", "Resume") in page.context["item_actions"]


def test_item_page_buttons_need_the_change_right(login, developer, alice, make_memory):
    memory = make_memory(alice, "prefers tea")
    page = login(developer).get(change_url(memory))
    assert page.context["item_actions"] == [] and 'class="mb-item-action"' not in page.content.decode()


def test_usage_figures_agree(login, support_user, alice, make_memory):
    """The count of uses and the access log are told apart, never contradicting each other."""
    memory = make_memory(alice, "prefers tea")
    client = login(support_user)
    html = client.get(change_url(memory)).content.decode()
    assert "Not read by any agent yet." in html and "Used" not in html
    LongTermMemory.objects.filter(pk=memory.pk).update(access_count=2)
    html = client.get(change_url(memory)).content.decode()
    assert "Used 2 times" in html and "Not read by any agent yet." not in html
    assert "The access log has no reads of this item" in html
    listing = client.get(changelist_url()).content.decode()
    assert "2 times" in listing


def test_support_approves_and_rejects_waiting_items_from_the_list(login, support_user, developer, alice, make_memory):
    waiting = [make_memory(alice, f"waiting {i}") for i in range(3)]
    active = make_memory(alice, "already active")
    LongTermMemory.objects.filter(pk__in=[m.pk for m in waiting]).update(archived=True, archived_reason="pending_review")
    client = login(support_user)
    page = client.get(changelist_url() + "?state=pending_review").content.decode()
    assert all(f"waiting {i}" in page for i in range(3)) and "already active" not in page
    run_action(client, "approve_selected", [waiting[0].pk, waiting[1].pk, active.pk])
    run_action(client, "reject_selected", [waiting[2].pk])
    states = dict(LongTermMemory.objects.values_list("pk", "archived_reason"))
    assert states[waiting[0].pk] is None and states[waiting[1].pk] is None and states[active.pk] is None
    assert states[waiting[2].pk] == "rejected"
    assert AuditLog.objects.filter(reason="approved in review", actor=support_user).count() == 2


def test_a_waiting_items_page_offers_approve_and_reject(login, support_user, alice, make_memory):
    item = make_memory(alice, "waiting for a decision")
    LongTermMemory.objects.filter(pk=item.pk).update(archived=True, archived_reason="pending_review")
    client = login(support_user)
    page = client.get(change_url(item)).content.decode()
    assert 'data-action="approve_selected"' in page and 'data-action="reject_selected"' in page
    run_action(client, "approve_selected", [item.pk])
    assert not LongTermMemory.objects.get(pk=item.pk).archived
