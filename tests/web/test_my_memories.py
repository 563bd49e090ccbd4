""""My memories": an end user's own items only, whatever the URL."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryAccess,
    MemoryFlag,
    UserMemorySettings,
)

pytestmark = pytest.mark.django_db


def _fresh(memory) -> LongTermMemory:
    return LongTermMemory.objects.get(pk=memory.pk)


def test_lists_only_own_items_grouped_by_type(login, alice, bob, make_memory):
    make_memory(alice, "alice likes tea", memory_type="PREFERENCE")
    make_memory(alice, "alice is a Java developer", memory_type="FACT")
    make_memory(bob, "bob secret fact", memory_type="FACT")
    html = login(alice).get(reverse("my-memories")).content.decode()
    assert "alice likes tea" in html and "alice is a Java developer" in html
    assert "bob secret fact" not in html
    assert html.index('data-type="FACT"') < html.index('data-type="PREFERENCE"')


def test_anonymous_is_sent_to_login(client):
    response = client.get(reverse("my-memories"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_staff_see_only_their_own_items_here_too(login, superuser, alice, make_memory):
    make_memory(alice, "alice only")
    make_memory(superuser, "root's own")
    html = login(superuser).get(reverse("my-memories")).content.decode()
    assert "root&#x27;s own" in html and "alice only" not in html


def test_text_search(login, alice, make_memory):
    make_memory(alice, "likes green tea")
    make_memory(alice, "works in Berlin")
    html = login(alice).get(reverse("my-memories"), {"q": "tea"}).content.decode()
    assert "likes green tea" in html and "works in Berlin" not in html


def test_empty_word_search_offers_a_search_by_meaning(login, alice, make_memory):
    # A Chinese query finds no English item word for word: the page points to the search that can.
    make_memory(alice, "likes green tea")
    client = login(alice)
    html = client.get(reverse("my-memories"), {"q": "绿茶 & 咖啡"}).content.decode()
    link = re.search(r'<a href="([^"]+)" data-action="search-semantic">', html)
    assert link, "no link to the semantic search"
    url = link.group(1).replace("&amp;", "&")
    assert url == "?q=%E7%BB%BF%E8%8C%B6%20%26%20%E5%92%96%E5%95%A1&mode=semantic"
    html = client.get(reverse("my-memories") + url).content.decode()
    assert 'data-action="search-semantic"' not in html


def test_semantic_search_stays_in_own_items(login, alice, bob, make_memory):
    make_memory(alice, "likes green tea")
    make_memory(bob, "bob likes green tea too")
    html = login(alice).get(reverse("my-memories"), {"q": "green tea", "mode": "semantic"}).content.decode()
    assert "likes green tea" in html and "bob likes" not in html
    assert "relevance" in html


def test_delete_and_undo(login, alice, make_memory):
    memory = make_memory(alice, "to be deleted")
    client = login(alice)
    response = client.post(reverse("my-memories-delete", args=[memory.pk]))
    assert response.status_code == 302
    memory = _fresh(memory)
    assert memory.archived and memory.archived_reason == ArchivedReason.USER_DELETED
    html = client.get(reverse("my-memories")).content.decode()
    deleted_section = html[html.index('id="recently-deleted"'):]
    assert "to be deleted" in deleted_section
    assert client.post(reverse("my-memories-restore", args=[memory.pk])).status_code == 302
    assert not _fresh(memory).archived
    assert AuditLog.objects.filter(object_id=memory.pk, action=AuditLog.Action.RESTORE).exists()


def test_delete_needs_post_and_csrf(alice, make_memory):
    from django.test import Client

    memory = make_memory(alice, "keep me")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.get(reverse("my-memories-delete", args=[memory.pk])).status_code == 405
    assert client.post(reverse("my-memories-delete", args=[memory.pk])).status_code == 403
    assert not _fresh(memory).archived


def test_undo_only_within_the_retention_period(login, alice, make_memory, settings):
    settings.MEMORYBOARD_DELETED_RETENTION_DAYS = 30
    memory = make_memory(alice, "old delete", archived_reason=ArchivedReason.USER_DELETED)
    LongTermMemory.objects.filter(pk=memory.pk).update(archived_at=timezone.now() - timedelta(days=31))
    client = login(alice)
    page = client.get(reverse("my-memories")).content.decode()
    # Still stored until the purge runs, so still shown (issue 12), but without an undo.
    assert "old delete" in page and reverse("my-memories-restore", args=[memory.pk]) not in page
    assert client.post(reverse("my-memories-restore", args=[memory.pk])).status_code == 404
    assert _fresh(memory).archived


def test_staff_archived_items_cannot_be_undone_by_the_user(login, alice, make_memory):
    memory = make_memory(alice, "archived by decay", archived_reason=ArchivedReason.DECAY)
    assert login(alice).post(reverse("my-memories-restore", args=[memory.pk])).status_code == 404
    assert _fresh(memory).archived


def test_delete_all_confirmation_and_post(login, alice, bob, make_memory):
    for i in range(3):
        make_memory(alice, f"alice item {i}")
    bobs = make_memory(bob, "bob item")
    client = login(alice)
    page = client.get(reverse("my-memories-delete-all")).content.decode()
    assert "Delete 3 of your memories?" in page and "Delete 3 items" in page
    assert LongTermMemory.objects.filter(archived=True).count() == 0  # GET changes nothing
    assert 'action="/me/memories/delete-all/"' in page  # the confirmation posts to delete-all itself
    assert client.post(reverse("my-memories-delete-all")).status_code == 302
    assert LongTermMemory.objects.filter(archived=True, archived_reason=ArchivedReason.USER_DELETED).count() == 3
    assert not _fresh(bobs).archived


def test_export_is_a_json_download_of_own_items(login, alice, bob, make_memory):
    make_memory(alice, "active one", memory_type="EPISODE")
    make_memory(alice, "archived one", archived_reason=ArchivedReason.DECAY)
    make_memory(bob, "bob's")
    response = login(alice).get(reverse("my-memories-export"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"].startswith("attachment;")
    data = json.loads(response.content)
    assert data["user_id"] == str(alice.pk)
    by_content = {m["content"]: m for m in data["memories"]}
    assert set(by_content) == {"active one", "archived one"}
    assert by_content["archived one"]["archived"] is True and by_content["active one"]["archived"] is False
    assert by_content["active one"]["type"] == "EPISODE"


def test_memory_switch(login, alice):
    client = login(alice)
    client.post(reverse("my-memories-switch"), {"save_memories": "on"})
    settings_row = UserMemorySettings.objects.get(user_id=str(alice.pk))
    assert settings_row.use_memories is False and settings_row.save_memories is True
    html = client.get(reverse("my-memories")).content.decode()
    assert 'name="use_memories" id="id_use_memories"' in html and 'name="save_memories" checked' in html.replace(
        ' id="id_save_memories"', "")


def test_pause_and_resume(login, alice, make_memory):
    memory = make_memory(alice, "pause me")
    client = login(alice)
    client.post(reverse("my-memories-pause", args=[memory.pk]))
    assert MemoryFlag.objects.get(memory_id=memory.pk).paused
    assert "badge-paused" in client.get(reverse("my-memories")).content.decode()
    client.post(reverse("my-memories-resume", args=[memory.pk]))
    assert not MemoryFlag.objects.get(memory_id=memory.pk).paused
    assert AuditLog.objects.filter(object_id=memory.pk, action=AuditLog.Action.PAUSE).exists()


def test_usage_is_the_items_counter_as_on_every_page(login, alice, support_user, make_memory):
    """One source of use figures: the item's counter (every retrieval adds one and logs where), as the admin
    and the support desk show it; uses counted by the platform without a log row still show."""
    from django.utils import timezone

    from memoryboard.models import LongTermMemory

    memory = make_memory(alice, "used item")
    MemoryAccess.objects.bulk_create([
        MemoryAccess(memory_id=memory.pk, agent_id="chat", conversation_id="c9", kind="retrieval", relevance=0.9)
        for _ in range(3)
    ])
    LongTermMemory.objects.filter(pk=memory.pk).update(access_count=4, last_accessed_at=timezone.now())
    client = login(alice)
    assert "used 4 times" in client.get(reverse("my-memories")).content.decode()
    detail = client.get(reverse("my-memories-detail", args=[memory.pk])).content.decode()
    assert "Used 4 times by agents" in detail and ">c9<" not in detail  # no conversation id shown
    desk = login(support_user).get(reverse("person", args=[alice.pk])).content.decode()
    assert "used 4 times by agents" in desk


@pytest.mark.parametrize(
    "route,archived_reason",
    [
        ("my-memories-delete", None),
        ("my-memories-restore", ArchivedReason.USER_DELETED),
        ("my-memories-pause", None),
        ("my-memories-resume", None),
    ],
)
def test_someone_elses_id_is_404_and_nothing_changes(login, alice, bob, make_memory, route, archived_reason):
    memory = make_memory(alice, "alice private", archived_reason=archived_reason)
    if route == "my-memories-resume":
        MemoryFlag.objects.create(memory_id=memory.pk, paused=True)
    before = LongTermMemory.objects.filter(pk=memory.pk).values().get()
    flags = list(MemoryFlag.objects.values())
    audits = AuditLog.objects.count()
    response = login(bob).post(reverse(route, args=[memory.pk]))
    assert response.status_code == 404
    assert LongTermMemory.objects.filter(pk=memory.pk).values().get() == before
    assert list(MemoryFlag.objects.values()) == flags
    assert AuditLog.objects.count() == audits


def test_bob_never_sees_alices_items_anywhere(login, alice, bob, make_memory):
    make_memory(alice, "alice active secret")
    make_memory(alice, "alice deleted secret", archived_reason=ArchivedReason.USER_DELETED)
    client = login(bob)
    for url in (reverse("my-memories"), reverse("my-memories") + "?q=secret",
                reverse("my-memories") + "?q=secret&mode=semantic", reverse("my-memories-delete-all"),
                reverse("my-memories-export")):
        content = client.get(url).content
        assert b"alice active" not in content and b"alice deleted" not in content, url
    client.post(reverse("my-memories-bulk"), {"action": "delete", "scope": "filter", "confirm": "True"})
    assert LongTermMemory.objects.filter(archived=False).count() == 1


def test_content_is_escaped(login, alice, make_memory):
    make_memory(alice, "<script>alert(1)</script> and <img src=x onerror=alert(2)>")
    html = login(alice).get(reverse("my-memories")).content.decode()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_manual_add(login, alice):
    client = login(alice)
    client.post(reverse("my-memories-add"), {"agent": "chat", "memory_type": "PREFERENCE", "content": "likes jazz"})
    memory = LongTermMemory.objects.get()
    assert memory.user_id == str(alice.pk) and memory.source == "manual" and memory.memory_type == "PREFERENCE"
    assert memory.embeddings.exists()
    assert "likes jazz" in client.get(reverse("my-memories")).content.decode()


@pytest.mark.parametrize(
    "data,needle",
    [
        # The field is named by its label, as the user sees it (not its code name).
        ({"agent": "nope", "memory_type": "FACT", "content": "x"}, "Agent: "),
        ({"agent": "chat", "memory_type": "WISH", "content": "x"}, "Type: "),
        ({"agent": "chat", "memory_type": "FACT", "content": ""}, "Content: "),
    ],
)
def test_manual_add_errors_name_the_field(login, alice, data, needle):
    response = login(alice).post(reverse("my-memories-add"), data, follow=True)
    assert needle in response.content.decode()
    assert LongTermMemory.objects.count() == 0


def test_manual_add_cannot_target_another_user(login, alice, bob):
    login(alice).post(reverse("my-memories-add"), {
        "agent": "chat", "memory_type": "FACT", "content": "sneaky", "user_id": str(bob.pk),
        "namespace": f'["agent:chat","user:{bob.pk}","memories"]',
    })
    assert LongTermMemory.objects.get().user_id == str(alice.pk)


def test_bulk_delete_selected_with_confirmation(login, alice, bob, make_memory):
    a = [make_memory(alice, f"alice {i}") for i in range(3)]
    bobs = make_memory(bob, "bob's item")
    client = login(alice)
    data = {"action": "delete", "scope": "selected", "ids": [a[0].pk, a[1].pk, bobs.pk]}
    page = client.post(reverse("my-memories-bulk"), data).content.decode()
    assert "Delete 2 items" in page and "bob&#x27;s item" not in page  # bob's id is silently not in scope
    assert LongTermMemory.objects.filter(archived=True).count() == 0  # nothing yet
    client.post(reverse("my-memories-bulk"), {**data, "confirm": "True"})
    assert set(LongTermMemory.objects.filter(archived=True).values_list("pk", flat=True)) == {a[0].pk, a[1].pk}
    assert not _fresh(bobs).archived


def test_bulk_pause_by_filter(login, alice, bob, make_memory):
    fact = make_memory(alice, "a fact", memory_type="FACT")
    pref = make_memory(alice, "a preference", memory_type="PREFERENCE")
    bob_pref = make_memory(bob, "bob preference", memory_type="PREFERENCE")
    client = login(alice)
    data = {"action": "pause", "scope": "filter", "memory_type": "PREFERENCE", "q": "", "confirm": "True"}
    client.post(reverse("my-memories-bulk"), data)
    paused = set(MemoryFlag.objects.filter(paused=True).values_list("memory_id", flat=True))
    assert paused == {pref.pk}
    assert fact.pk not in paused and bob_pref.pk not in paused


def test_bulk_needs_a_selection(login, alice, make_memory):
    make_memory(alice, "x")
    response = login(alice).post(reverse("my-memories-bulk"), {"action": "delete", "scope": "selected"},
                                      follow=True)
    assert "Select at least one item." in response.content.decode()
    assert LongTermMemory.objects.filter(archived=True).count() == 0


def test_detail_page_shows_access_log_paginated_and_state_history(login, alice, make_memory):
    memory = make_memory(alice, "detail me")
    MemoryAccess.objects.bulk_create([
        MemoryAccess(memory_id=memory.pk, agent_id="chat", conversation_id=f"conv-{i}", kind="injection",
                     relevance=0.5, created_at=timezone.now() - timedelta(minutes=i))
        for i in range(25)
    ])
    LongTermMemory.objects.filter(pk=memory.pk).update(access_count=25, last_accessed_at=timezone.now())
    client = login(alice)
    client.post(reverse("my-memories-pause", args=[memory.pk]))
    html = client.get(reverse("my-memories-detail", args=[memory.pk])).content.decode()
    assert "Used 25 times by agents, last now." in html
    assert html.count('<tr class="access">') == 20 and html.count('<tr class="state-change">') == 1
    assert "page 1 of 2" in html and "Paused" in html
    page2 = client.get(reverse("my-memories-detail", args=[memory.pk]), {"page": 2}).content.decode()
    assert 'href="/me/conversations/conv-24/"' in page2 and 'href="/me/conversations/conv-0/"' not in page2
    listing = client.get(reverse("my-memories")).content.decode()
    assert "used 25 times by agents, last " in listing


def test_detail_of_someone_elses_item_is_404(login, alice, bob, make_memory):
    memory = make_memory(alice, "private")
    assert login(bob).get(reverse("my-memories-detail", args=[memory.pk])).status_code == 404


def test_pause_rules_by_type_and_agent_stop_retrieval(login, alice, bob, make_memory):
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.search.retrieval import memory_retrieve
    from memoryboard.models import PauseRule

    make_memory(alice, "alice likes green tea", memory_type="PREFERENCE")
    fact = make_memory(alice, "alice drinks green tea daily", memory_type="FACT")
    make_memory(bob, "bob likes green tea", memory_type="PREFERENCE")
    client = login(alice)
    client.post(reverse("my-memories-pause-rules"), {"types": ["PREFERENCE"], "agents": []})
    assert list(PauseRule.objects.values_list("user_id", "agent_namespace", "memory_type")) == [
        (str(alice.pk), "", "PREFERENCE")]
    hits = memory_retrieve(namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)),
                           query="green tea", log_access=False)
    assert [h.memory.pk for h in hits] == [fact.pk]
    html = client.get(reverse("my-memories")).content.decode()
    assert "paused by type or agent" in html and "alice likes green tea" in html  # kept and visible
    client.post(reverse("my-memories-pause-rules"), {"agents": ["chat"]})
    assert memory_retrieve(namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)),
                           query="green tea", log_access=False) == []
    # bob is untouched
    bob_hits = memory_retrieve(namespace=build_namespace(agent_namespace="chat", user_id=str(bob.pk)),
                               query="green tea", log_access=False)
    assert len(bob_hits) == 1
    client.post(reverse("my-memories-pause-rules"), {})
    assert not PauseRule.objects.exists()


def test_pause_rules_reject_unknown_values(login, alice):
    from memoryboard.models import PauseRule

    response = login(alice).post(reverse("my-memories-pause-rules"), {"types": ["WISH"]}, follow=True)
    assert "types:" in response.content.decode()
    assert not PauseRule.objects.exists()
