"""Each write path goes through the reconcile step: import, MCP memory_save, the agent's tool, the API's
PATCH, My memories' add and edit, the admin's add."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryboard.ltm.write.importing import memory_import
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db


def ns(user):
    return build_namespace(agent_namespace="chat", user_id=str(user.pk))


def stored(user, content):
    return memory_save_reconciled(namespace=ns(user), content=content, memory_type="FACT", agent_id="chat").memory


def superseded_by(memory):
    memory.refresh_from_db()
    assert memory.archived_reason == "superseded", memory.archived_reason
    return LongTermMemory.objects.get(pk=memory.superseded_by)


def test_import(alice):
    old = stored(alice, "I live in Shanghai")
    summary = memory_import(items=[{"content": "I moved to Berlin"}, {"content": "I live in Berlin"},
                                   {"content": "I like jazz"}], user_id=str(alice.pk), actor=alice, dry_run=False)
    assert superseded_by(old).content == "I moved to Berlin"
    assert summary.imported == 2  # "I live in Berlin" repeats the row before it in other words
    assert sorted(LongTermMemory.objects.filter(archived=False).values_list("value_json__content", flat=True)) == [
        "I like jazz", "I moved to Berlin"]


def test_import_of_an_older_statement_does_not_retire_the_current_one(alice):
    current = stored(alice, "I live in Berlin")
    memory_import(items=[{"content": "I live in Shanghai", "created_at": "2020-01-01T00:00:00Z"}],
                  user_id=str(alice.pk), actor=alice, dry_run=False)
    current.refresh_from_db()
    assert not current.archived
    old = LongTermMemory.objects.get(value_json__content="I live in Shanghai")
    assert old.archived_reason == "superseded" and old.superseded_by == current.pk


def test_mcp_memory_save(alice):
    from memoryboard.mcp_server.tools import McpIdentity, mcp_memory_save

    identity = McpIdentity(user_pk=alice.pk, user_id=str(alice.pk), agent_id="chat", agent_namespace="chat")
    old = stored(alice, "I work as a teacher")
    result = mcp_memory_save(identity=identity, content="I work as a nurse now")
    assert result["saved"] is True and result["superseded"] == [old.pk]
    assert superseded_by(old).source == "mcp"
    assert mcp_memory_save(identity=identity, content="I am a nurse") == {"saved": False, "duplicate_of": result["id"]}


def test_agent_tool(alice):
    from memoryboard.ltm.write.tools import run_memory_tool

    old = stored(alice, "My favourite drink is coffee")
    result = run_memory_tool(name="memory_save", arguments={"content": "My favourite drink is green tea",
                                                            "type": "PREFERENCE"}, namespace=ns(alice), agent_id="chat")
    assert result["superseded"] == [old.pk] and superseded_by(old).pk == result["id"]


def test_api_patch_edit(alice):
    from rest_framework.test import APIClient

    shanghai = stored(alice, "I live in Shanghai")
    other = stored(alice, "I like jazz")
    client = APIClient()
    client.force_login(alice)
    response = client.patch(f"/api/v1/memories/{other.pk}/", {"content": "I live in Berlin"}, format="json")
    assert response.status_code == 200
    assert superseded_by(shanghai).pk == other.pk
    assert client.get(f"/api/v1/memories/{shanghai.pk}/").json()["state"] == "superseded"


def test_my_memories_add_and_edit(login, alice):
    client = login(alice)
    shanghai = stored(alice, "I live in Shanghai")
    client.post(reverse("my-memories-add"), {"agent": "chat", "memory_type": "FACT", "content": "I moved to Berlin"})
    berlin = superseded_by(shanghai)
    assert berlin.content == "I moved to Berlin" and berlin.source == "manual"
    client.post(reverse("my-memories-edit", args=[berlin.pk]), {"content": "I moved to Paris"})
    berlin.refresh_from_db()
    assert berlin.content == "I moved to Paris" and not berlin.archived  # an edit never retires itself


def test_admin_add(login, support_user, alice):
    shanghai = stored(alice, "I live in Shanghai")
    response = login(support_user).post(reverse("admin:memoryboard_longtermmemory_add"), {
        "agent": "chat", "user_id": str(alice.pk), "memory_type": "FACT", "content": "I moved to Berlin"})
    assert response.status_code == 302, response.content[:500]
    assert superseded_by(shanghai).content == "I moved to Berlin"
