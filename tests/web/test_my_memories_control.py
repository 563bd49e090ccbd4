"""Users in control (issue 15, item 4): plain words, ranked search, edit, source conversation, undo a bulk delete."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryEmbedding,
    MemoryFlag,
)

pytestmark = pytest.mark.django_db


def _fresh(memory) -> LongTermMemory:
    return LongTermMemory.objects.get(pk=memory.pk)


def _delete_all(client) -> str:
    """Confirm "delete all"; returns the redirect target (with the batch to undo)."""
    response = client.post(reverse("my-memories-bulk"), {"action": "delete", "scope": "filter", "confirm": "True"})
    assert response.status_code == 302
    return response["Location"]


# --- plain words ---------------------------------------------------------------------------------------


def test_agents_sources_and_times_in_plain_words(login, alice, make_memory):
    make_memory(alice, "likes tea", source="auto_extract")
    make_memory(alice, "lives in Shanghai", source="agent_tool", agent="coder")
    html = login(alice).get(reverse("my-memories")).content.decode()
    assert "noted by Chat assistant from a chat" in html  # agents.yaml's display name
    assert "saved by Coding assistant during a chat" in html
    assert "Auto-extracted" not in html and "Agent tool" not in html and "agent chat" not in html
    assert re.search(r"updated (now|a second ago|\d+ seconds ago)", html) and "0 minutes" not in html


def test_offline_banner_and_api_only_for_staff(login, alice, developer):
    client = login(alice)
    for url in (reverse("home"), reverse("my-memories")):
        html = client.get(url).content.decode()
        assert "OPENAI_BASE_URL" not in html and "REST API" not in html and reverse("api-docs") not in html, url
    html = login(developer).get(reverse("home")).content.decode()
    assert "OPENAI_BASE_URL" in html and "REST API" in html


def test_semantic_results_ranked_with_relevance_in_words(login, alice, make_memory):
    make_memory(alice, "works remotely from Berlin", memory_type="FACT")
    make_memory(alice, "likes green tea in the morning", memory_type="PREFERENCE")
    make_memory(alice, "drinks green tea every day", memory_type="EPISODE")
    html = login(alice).get(reverse("my-memories"), {"q": "green tea", "mode": "semantic"}).content.decode()
    section = html[html.index('id="search-results"'):html.index('id="recently-deleted"')]
    assert 'class="mem-group"' not in html  # not regrouped by type
    order = re.findall(r'<label class="mem-content">.*?> (.*?)</label>', section, re.S)
    scores = [float(s) for s in re.findall(r'data-score="([0-9.-]+)"', section)]
    assert len(order) == 3 and scores == sorted(scores, reverse=True)
    # The unrelated item is listed last and said to be so (below the minimum relevance the assistant uses).
    assert order[-1] == "works remotely from Berlin"
    words = re.findall(r'<span class="badge relevance"[^>]*>([^<]+)</span>', section)
    assert len(words) == 3 and set(words[:2]) <= {"close match", "related", "loosely related"}
    assert words[2] == "probably unrelated"
    shown = re.sub(r"<[^>]+>", " ", section)  # the text a user reads (data-score is for the page's script)
    assert "0.00" not in shown and "relevance 0." not in shown


# --- edit ----------------------------------------------------------------------------------------------


def test_edit_reembeds_audits_and_keeps_the_previous_text(login, alice, make_memory):
    memory = make_memory(alice, "likes green tea")
    vector_before = bytes(MemoryEmbedding.objects.get(memory_id=memory.pk).vector)
    client = login(alice)
    response = client.post(reverse("my-memories-edit", args=[memory.pk]), {"content": "prefers black coffee"})
    assert response.status_code == 302
    assert _fresh(memory).content == "prefers black coffee"
    assert bytes(MemoryEmbedding.objects.get(memory_id=memory.pk).vector) != vector_before
    entry = AuditLog.objects.get(object_id=memory.pk, action=AuditLog.Action.UPDATE)
    assert entry.actor == alice and entry.before["value_json"]["content"] == "likes green tea"
    html = client.get(reverse("my-memories-detail", args=[memory.pk])).content.decode()
    history = html[html.index('class="edit-history"'):]
    assert "<span class=\"earlier-text\">likes green tea</span>" in history
    assert "prefers black coffee" in html[:html.index('class="edit-history"')]


def test_edit_errors_name_the_field_and_change_nothing(login, alice, make_memory):
    memory = make_memory(alice, "likes green tea")
    response = login(alice).post(reverse("my-memories-edit", args=[memory.pk]), {"content": "   "})
    assert response.status_code == 400 and 'role="alert"' in response.content.decode()
    assert _fresh(memory).content == "likes green tea"
    assert not AuditLog.objects.filter(action=AuditLog.Action.UPDATE).exists()


@pytest.mark.parametrize("owner_is_other,archived_reason", [(True, None), (False, ArchivedReason.STAFF),
                                                            (False, ArchivedReason.USER_DELETED)])
def test_edit_of_others_or_archived_items_is_404(login, alice, bob, make_memory, owner_is_other, archived_reason):
    memory = make_memory(bob if owner_is_other else alice, "not yours to edit", archived_reason=archived_reason)
    response = login(alice).post(reverse("my-memories-edit", args=[memory.pk]), {"content": "hacked"})
    assert response.status_code == 404 and _fresh(memory).content == "not yours to edit"


def test_edit_needs_csrf(alice, make_memory):
    from django.test import Client

    memory = make_memory(alice, "keep me")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(reverse("my-memories-edit", args=[memory.pk]), {"content": "x"}).status_code == 403


# --- the source conversation ---------------------------------------------------------------------------


def test_link_to_the_source_conversation(login, alice, make_conversation):
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.items import memory_create

    make_conversation(alice, 6, conversation_id="conv-tea", contents=["sys", "I like <b>tea</b>", "ok", "a", "b", "c"])
    memory = memory_create(namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)),
                           content="likes tea", memory_type="PREFERENCE", source="auto_extract", agent_id="chat",
                           conversation_id="conv-tea")
    client = login(alice)
    url = reverse("my-conversation", args=["conv-tea"])
    assert f'href="{url}"' in client.get(reverse("my-memories")).content.decode()
    assert f'href="{url}"' in client.get(reverse("my-memories-detail", args=[memory.pk])).content.decode()
    html = client.get(url).content.decode()
    assert "I like &lt;b&gt;tea&lt;/b&gt;" in html and "Your conversation with Chat assistant" in html
    assert reverse("my-memories-detail", args=[memory.pk]) in html  # the memories it gave


def test_someone_elses_conversation_is_404_even_for_staff(login, alice, bob, superuser, make_conversation):
    make_conversation(bob, 4, conversation_id="bob-conv")
    for user in (alice, superuser):
        assert login(user).get(reverse("my-conversation", args=["bob-conv"])).status_code == 404


def test_tool_and_extraction_saves_record_their_conversation(alice):
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.tools import run_memory_tool

    result = run_memory_tool(name="memory_save", arguments={"content": "owns a cat", "type": "FACT"},
                             namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)),
                             agent_id="chat", conversation_id="conv-7")
    assert LongTermMemory.objects.get(pk=result["id"]).value_json["conversationId"] == "conv-7"


# --- undo a whole bulk delete --------------------------------------------------------------------------


def test_delete_all_is_undone_in_one_step(login, alice, make_memory):
    items = [make_memory(alice, f"item {i}") for i in range(4)]
    MemoryFlag.objects.create(memory_id=items[0].pk, paused=True)
    single = make_memory(alice, "deleted on its own earlier")
    client = login(alice)
    client.post(reverse("my-memories-delete", args=[single.pk]))
    target = _delete_all(client)
    assert all(_fresh(m).archived for m in items)
    page = client.get(target).content.decode()
    bar = re.search(r'<form method="post" action="([^"]+)" class="undo-bar"', page)
    assert bar and "You deleted 4 memories." in page and "Undo: bring all 4 back" in page
    assert client.post(bar.group(1)).status_code == 302
    assert not any(_fresh(m).archived for m in items)
    assert _fresh(single).archived  # not part of the batch
    assert MemoryFlag.objects.get(memory_id=items[0].pk).paused  # back to its state before
    assert AuditLog.objects.filter(action=AuditLog.Action.RESTORE, object_type="memory").count() == 4
    # Nothing left to undo: the batch is no longer offered.
    assert "undo-batch" not in client.get(reverse("my-memories")).content.decode().split('id="recently-deleted"')[1]


def test_recently_deleted_offers_undo_of_each_batch(login, alice, make_memory):
    make_memory(alice, "a")
    make_memory(alice, "b")
    client = login(alice)
    _delete_all(client)
    html = client.get(reverse("my-memories")).content.decode()
    section = html[html.index('id="recently-deleted"'):]
    assert re.search(r"2 memories deleted together (now|a second ago|\d+ seconds ago)", section)
    assert "Bring all 2 back" in section


def test_undo_of_someone_elses_batch_is_404(login, alice, bob, make_memory):
    mine = make_memory(alice, "alice item")
    target = _delete_all(login(alice))
    batch = target.split("deleted=")[1]
    assert login(bob).post(reverse("my-memories-undo-batch", args=[batch])).status_code == 404
    assert _fresh(mine).archived


def test_undo_after_the_retention_period_is_404(login, alice, make_memory, settings):
    settings.MEMORYBOARD_DELETED_RETENTION_DAYS = 30
    mine = make_memory(alice, "old")
    client = login(alice)
    batch = _delete_all(client).split("deleted=")[1]
    AuditLog.objects.filter(object_id=batch).update(created_at=timezone.now() - timedelta(days=31))
    LongTermMemory.objects.filter(pk=mine.pk).update(archived_at=timezone.now() - timedelta(days=31))
    assert client.post(reverse("my-memories-undo-batch", args=[batch])).status_code == 404
    assert _fresh(mine).archived


def test_undo_of_a_selected_bulk_delete(login, alice, make_memory):
    a, b, c = (make_memory(alice, t) for t in ("a", "b", "c"))
    client = login(alice)
    response = client.post(reverse("my-memories-bulk"),
                           {"action": "delete", "scope": "selected", "ids": [a.pk, b.pk], "confirm": "True"})
    batch = response["Location"].split("deleted=")[1]
    client.post(reverse("my-memories-undo-batch", args=[batch]))
    assert not _fresh(a).archived and not _fresh(b).archived and not _fresh(c).archived


def test_undo_of_delete_all_returns_staff_archives_to_their_archive(login, alice, make_memory):
    active = make_memory(alice, "active one")
    staff = make_memory(alice, "archived by staff", archived_reason=ArchivedReason.STAFF)
    client = login(alice)
    response = client.post(reverse("my-memories-delete-all"))  # issue 12: everything the export lists
    assert response.status_code == 302 and "deleted=" in response["Location"]
    assert _fresh(staff).archived_reason == ArchivedReason.USER_DELETED
    page = client.get(response["Location"]).content.decode()
    assert "You deleted 2 memories." in page
    client.post(reverse("my-memories-undo-batch", args=[response["Location"].split("deleted=")[1]]))
    assert not _fresh(active).archived
    assert _fresh(staff).archived and _fresh(staff).archived_reason == ArchivedReason.STAFF
