"""Who reaches which part of the admin: superuser, support, developers, end users."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryboard.models import ChatMessage, LongTermMemory
from tests.admin.conftest import change_url, changelist_url

pytestmark = pytest.mark.django_db


def test_end_user_gets_no_admin(login, alice, make_memory):
    memory = make_memory(alice, "my own fact")
    client = login(alice)
    for url in (changelist_url(), change_url(memory), reverse("admin:index")):
        response = client.get(url)
        assert response.status_code == 403  # the site's 403 page, not the admin's login form
        assert "my own fact" not in response.content.decode()


@pytest.mark.parametrize("role", ["superuser", "support_user", "developer"])
def test_staff_roles_browse_memories(request, login, alice, make_memory, role):
    memory = make_memory(alice, "likes green tea")
    client = login(request.getfixturevalue(role))
    response = client.get(changelist_url())
    assert response.status_code == 200
    assert "likes green tea" in response.content.decode()
    assert client.get(change_url(memory)).status_code == 200


def test_support_edits_but_cannot_delete(login, support_user, alice, make_memory):
    memory = make_memory(alice, "likes green tea")
    client = login(support_user)
    page = client.get(change_url(memory)).content.decode()
    assert 'name="content"' in page and 'name="memory_type"' in page
    assert client.get(reverse("admin:memoryboard_longtermmemory_delete", args=[memory.pk])).status_code == 403
    actions = client.get(changelist_url()).context["action_form"].fields["action"].choices
    names = {name for name, _label in actions}
    assert {"archive_selected", "restore_selected", "reembed_selected"} <= names
    assert "delete_selected" not in names


def test_developer_is_read_only(login, developer, alice, make_memory):
    memory = make_memory(alice, "likes green tea")
    client = login(developer)
    page = client.get(change_url(memory)).content.decode()
    assert 'name="content"' not in page
    assert "likes green tea" in page
    response = client.post(change_url(memory), {"content": "changed", "memory_type": "FACT"})
    assert response.status_code == 403
    assert client.get(reverse("admin:memoryboard_longtermmemory_add")).status_code == 403
    # No actions offered, and a forged action post changes nothing.
    assert client.get(changelist_url()).context["action_form"] is None
    client.post(changelist_url(), {"action": "archive_selected", "index": 0, "_selected_action": [memory.pk],
                                   "confirm": "yes"})
    memory.refresh_from_db()
    assert memory.content == "likes green tea" and not memory.archived


def test_staff_without_role_sees_nothing(login, django_user_model, alice, make_memory):
    make_memory(alice, "secret")
    staff = django_user_model.objects.create_user("plainstaff", password="x", is_staff=True)
    client = login(staff)
    assert client.get(changelist_url()).status_code == 403


def test_chat_messages_read_only_for_support_and_developers(login, support_user, developer, superuser):
    msg = ChatMessage.objects.create(conversation_id="c1", agent_id="chat", user_id="1", role="USER", content="hi")
    url = reverse("admin:memoryboard_chatmessage_change", args=[msg.pk])
    for user in (support_user, developer):
        client = login(user)
        assert client.get(reverse("admin:memoryboard_chatmessage_changelist")).status_code == 200
        page = client.get(url).content.decode()
        assert 'name="content"' not in page
        assert client.post(url, {"content": "changed"}).status_code == 403
        assert client.get(reverse("admin:memoryboard_chatmessage_add")).status_code == 403
        assert client.get(reverse("admin:memoryboard_chatmessage_delete", args=[msg.pk])).status_code == 403
    assert 'name="content"' in login(superuser).get(url).content.decode()


def test_audit_log_read_only_for_everyone(login, superuser, support_user, developer, alice, make_memory):
    make_memory(alice, "x")
    from memoryboard.models import AuditLog

    entry = AuditLog.objects.first()
    url = reverse("admin:memoryboard_auditlog_change", args=[entry.pk])
    for user in (superuser, support_user, developer):
        client = login(user)
        assert client.get(reverse("admin:memoryboard_auditlog_changelist")).status_code == 200
        page = client.get(url)
        assert page.status_code == 200
        assert 'name="_save"' not in page.content.decode()
        assert client.post(url, {"action": "purge"}).status_code == 403
        assert client.get(reverse("admin:memoryboard_auditlog_add")).status_code == 403
        assert client.get(reverse("admin:memoryboard_auditlog_delete", args=[entry.pk])).status_code == 403
    assert AuditLog.objects.filter(pk=entry.pk, action="create").exists()


def test_superuser_purge_is_audited(login, superuser, alice, make_memory):
    from memoryboard.models import AuditLog, MemoryEmbedding, MemoryStateChange

    memory = make_memory(alice, "to be purged")
    client = login(superuser)
    response = client.post(reverse("admin:memoryboard_longtermmemory_delete", args=[memory.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not LongTermMemory.objects.filter(pk=memory.pk).exists()
    assert not MemoryEmbedding.objects.filter(memory_id=memory.pk).exists()
    entry = AuditLog.objects.get(object_id=memory.pk, action="purge")
    assert entry.actor == superuser and entry.before["value_json"]["content"] == "to be purged"
    assert MemoryStateChange.objects.filter(memory_id=memory.pk, new_state="purged").exists()


def test_superuser_bulk_delete_purges_with_audit(login, superuser, alice, make_memory):
    from memoryboard.models import AuditLog

    items = [make_memory(alice, f"purge {i}") for i in range(3)]
    client = login(superuser)
    response = client.post(changelist_url(), {"action": "delete_selected", "index": 0, "post": "yes",
                                              "_selected_action": [m.pk for m in items]})
    assert response.status_code == 302
    assert not LongTermMemory.objects.exists()
    assert AuditLog.objects.filter(action="purge", actor=superuser).count() == 3
