"""The user page as the support desk: every item in words, filters whose counts agree with the list, and
edit, archive (with a typed reason), restore and history in place; "no such user" for unknown ids."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memoryboard.ltm.store.items import memory_set_paused
from memoryboard.models import ArchivedReason, AuditLog, ChatMessage, LongTermMemory, MemoryStateChange

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _item_ids(html: str) -> list[str]:
    return re.findall(r'<li class="desk-item[^"]*" id="item-([0-9a-f]+)"', html)


def test_every_item_in_words_with_filters_whose_counts_agree(login, support_user, bob_named, make_memory):
    active = make_memory(bob_named, "bob rides a bike", memory_type="PREFERENCE")
    paused = make_memory(bob_named, "bob likes tea")
    memory_set_paused(memory=paused, actor=support_user, paused=True)
    decayed = make_memory(bob_named, "bob wrote go once", agent="coder", archived_reason=ArchivedReason.DECAY)
    deleted = make_memory(bob_named, "bob deleted this", archived_reason=ArchivedReason.USER_DELETED)
    stale = make_memory(bob_named, "bob lived in Paris", archived_reason=ArchivedReason.SUPERSEDED)
    LongTermMemory.objects.filter(pk=active.pk).update(
        access_count=4, value_json={**active.value_json, "conversationId": "conv-7"})
    client = login(support_user)
    url = reverse("person", args=[bob_named.pk])
    page = client.get(url)
    html = page.content.decode()
    assert set(_item_ids(html)) == {active.pk, paused.pk, decayed.pk, deleted.pk, stale.pk}
    # In words: agent by its name, type, state, why, source conversation, use count.
    assert "Coding assistant" in html and "Preference" in html and "Replaced by a newer statement" in html
    assert "relevance score was below 0.1" in html  # the decay threshold, with the date
    assert "Deleted by the user on" in html
    assert "used 4 times by agents" in html and "conv-7" in html
    assert '"namespace"' not in html and "agent:" not in html
    # Each count is what its filter lists.
    counts = {label: n for _code, label, _url, n in page.context["states"]}
    assert counts == {"Current": 1, "Paused": 1, "Archived": 1, "Deleted by the user": 1, "Replaced by a newer statement": 1}
    for code, _label, _url, n in page.context["states"]:
        listed = _item_ids(client.get(url, {"state": code}).content.decode())
        assert len(listed) == n, code
    assert _item_ids(client.get(url, {"agent": "coder"}).content.decode()) == [decayed.pk]
    assert _item_ids(client.get(url, {"agent": "chat", "state": "paused"}).content.decode()) == [paused.pk]


def test_edit_archive_with_a_reason_restore_and_history_in_place(login, support_user, bob_named, make_memory):
    item = make_memory(bob_named, "bob rides a bike")
    client = login(support_user)
    base = [bob_named.pk, item.pk]

    edited = client.post(reverse("person-item-edit", args=base),
                         {"content": "bob rides a red bike", "memory_type": "PREFERENCE"}, **HTMX)
    assert edited.status_code == 200 and edited.content.decode().startswith("<li")  # the row, swapped in place
    item.refresh_from_db()
    assert item.content == "bob rides a red bike" and item.memory_type == "PREFERENCE"

    refused = client.post(reverse("person-item-archive", args=base), {"note": "  "}, **HTMX)
    assert refused.status_code == 400 and "Say why the item is archived." in refused.content.decode()
    item.refresh_from_db()
    assert not item.archived

    archived = client.post(reverse("person-item-archive", args=base), {"note": "customer asked"}, **HTMX)
    row = archived.content.decode()
    assert archived.status_code == 200 and "customer asked" in row and 'data-action="restore"' in row
    item.refresh_from_db()
    assert item.archived and item.archived_reason == ArchivedReason.STAFF
    assert AuditLog.objects.filter(object_id=item.pk, action="archive").get().reason_label == \
        "Archived by support: “customer asked”"

    restored = client.post(reverse("person-item-restore", args=base), **HTMX)
    assert restored.status_code == 200 and 'data-action="archive"' in restored.content.decode()
    history = client.get(reverse("person-item-history", args=base), **HTMX).content.decode()
    assert "Archived by support: “customer asked”" in history and "Restored" in history
    assert "bob rides a bike" in history and "bob rides a red bike" in history  # the edit, old and new
    assert MemoryStateChange.objects.filter(memory_id=item.pk).count() == 2

    # Without JavaScript: a redirect back to the item on the page, with the message.
    plain = client.post(reverse("person-item-archive", args=base), {"note": "again"})
    assert plain.status_code == 302 and plain["Location"].endswith(f"#item-{item.pk}")


def test_actions_need_the_right_to_change_and_the_persons_own_item(login, developer, support_user, bob, alice,
                                                                   make_memory):
    bobs = make_memory(bob, "bob rides a bike")
    alices = make_memory(alice, "alice drives")
    dev = login(developer)
    assert dev.get(reverse("person", args=[bob.pk])).status_code == 200
    assert 'data-action="archive"' not in dev.get(reverse("person", args=[bob.pk])).content.decode()
    assert dev.post(reverse("person-item-archive", args=[bob.pk, bobs.pk]), {"note": "x"}).status_code == 403
    support = login(support_user)
    # alice's item through bob's page: not found, unchanged.
    assert support.post(reverse("person-item-archive", args=[bob.pk, alices.pk]), {"note": "x"}).status_code == 404
    alices.refresh_from_db()
    assert not alices.archived
    assert login(alice).get(reverse("person-item-history", args=[bob.pk, bobs.pk])).status_code == 403


def test_an_unknown_id_is_no_such_user(login, support_user):
    client = login(support_user)
    response = client.get(reverse("person", args=["9999"]))
    assert response.status_code == 404 and "Erase" not in response.content.decode()
    assert client.get(reverse("person-erase", args=["9999"])).status_code == 404
    ChatMessage.objects.create(conversation_id="c", agent_id="chat", user_id="ext-1", role="USER", content="hi")
    assert client.get(reverse("person", args=["ext-1"])).status_code == 200  # known by their data


def test_erase_confirmation_counts_what_the_page_lists_and_speaks_of_them(login, support_user, bob, make_memory):
    make_memory(bob, "bob rides a bike")
    for conversation, n in (("c1", 2), ("c2", 3)):
        for i in range(n):
            ChatMessage.objects.create(conversation_id=conversation, agent_id="chat", user_id=str(bob.pk),
                                       role="USER", content=f"m{i}")
    client = login(support_user)
    page = client.get(reverse("person", args=[bob.pk])).content.decode()
    assert "2 conversations" in page and "5 messages" in page
    erase = client.get(reverse("person-erase", args=[bob.pk]))
    rows = {key: n for key, _label, n in erase.context["rows"]}
    assert rows["conversations"] == 2 and rows["chat_messages"] == 5
    assert "yours" not in erase.content.decode() and "your " not in erase.content.decode()


def test_the_erase_entry_reads_by_kind_of_data_not_table_names(login, support_user, bob, make_memory):
    from memoryboard.models import AuditLog

    make_memory(bob, "bob rides a bike")
    ChatMessage.objects.create(conversation_id="c1", agent_id="chat", user_id=str(bob.pk), role="USER", content="hi")
    client = login(support_user)
    client.post(reverse("person-erase", args=[bob.pk]), {"confirm": "yes"})
    entry = AuditLog.objects.get(action="erase")
    page = client.get(reverse("admin:memoryboard_auditlog_change", args=[entry.pk])).content.decode()
    assert "memory items, in every state" in page and "messages of those conversations, every kind (theirs" in page
    assert "ah_long_term_memory" not in page and "chat_message" not in page and "yours" not in page
