"""The admin says things in words to support and keeps ids for developers: a purged item's audit entries,
a conversation's messages, an item's history page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryboard.models import AuditLog, ChatMessage

pytestmark = pytest.mark.django_db


def test_a_purged_items_entry_says_what_it_was(login, superuser, support_user, developer, alice, make_memory):
    from memoryboard.ltm.write.staff import memory_purge_many
    from memoryboard.ltm.store.items import memory_set_paused

    item = make_memory(alice, "User wants paper statements", memory_type="PREFERENCE")
    memory_set_paused(memory=item, actor=support_user, paused=True)
    entry = AuditLog.objects.get(object_id=item.pk, action=AuditLog.Action.PAUSE)
    memory_purge_many(memories=[item], actor=superuser)
    url = reverse("admin:memoryboard_auditlog_change", args=[entry.pk])
    page = login(support_user).get(url).content.decode()  # the pause entry recorded no text: the purge did
    assert "User wants paper statements (no longer stored)" in page and item.pk not in page
    listing = login(support_user).get(reverse("admin:memoryboard_auditlog_changelist")).content.decode()
    assert item.pk not in listing  # nor a link to the page of an item that is gone
    assert listing.count("User wants paper statements (no longer stored)") == 3  # created, paused, purged
    assert listing.count(f'<a href="/support/users/{alice.pk}/">alice</a>') >= 2  # whose it was
    assert item.pk in login(developer).get(url).content.decode()


def test_a_conversations_messages_without_ids_for_support(login, support_user, developer, alice):
    rows = [ChatMessage.objects.create(conversation_id="c-ids", agent_id="chat", user_id=str(alice.pk), role=role,
                                       content=content, metadata=metadata)
            for role, content, metadata in [
                ("USER", "Any notes?", None),
                ("ASSISTANT", "", {"tool_calls": [{"id": "k1", "type": "function",
                                                   "function": {"name": "lookup_notes", "arguments": "{}"}}]}),
                ("TOOL", '{"notes": ["lost card"], "count": 1}', {"tool_call_id": "k1"})]]
    url = reverse("admin:memoryboard_chatmessage_changelist") + "?conversation_id=c-ids"
    support = login(support_user).get(url)
    assert "message_id" not in support.context["cl"].list_display
    page = support.content.decode()
    assert "called lookup_notes" in page and "notes: 1 entry; count: 1" in page
    assert '{"notes"' not in page
    assert "message_id" in login(developer).get(url).context["cl"].list_display
    change = login(support_user).get(reverse("admin:memoryboard_chatmessage_change", args=[rows[2].pk]))
    assert f"#{rows[2].pk}" not in change.content.decode()


def test_an_items_history_page_lists_its_audit_entries(login, support_user, alice, make_memory):
    from memoryboard.ltm.write.edits import memory_update

    item = make_memory(alice, "User likes tea")
    memory_update(memory=item, actor=support_user, content="User likes green tea")
    page = login(support_user).get(reverse("admin:memoryboard_longtermmemory_history", args=[item.pk]))
    html = page.content.decode()
    assert 'id="mb-audit-history"' in html
    assert "User likes tea" in html and "User likes green tea" in html
    assert "probably wasn’t added via this admin site" not in html


def test_a_gone_items_address_says_so_without_its_id(login, superuser, support_user, developer, alice,
                                                     make_memory):
    from memoryboard.ltm.write.staff import memory_purge_many

    item = make_memory(alice, "User wants paper statements")
    memory_purge_many(memories=[item], actor=superuser)
    url = reverse("admin:memoryboard_longtermmemory_change", args=[item.pk])
    response = login(support_user).get(url, follow=True)
    said = [str(m) for m in response.context["messages"]]
    assert said == ["This long-term memory no longer exists: it was deleted, purged or erased."]
    assert response.redirect_chain[-1][0] == reverse("admin:memoryboard_longtermmemory_changelist")
    said = [str(m) for m in login(developer).get(url, follow=True).context["messages"]]
    assert item.pk in said[0]
