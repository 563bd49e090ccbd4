"""POST /api/v1/memories/import: dry run first, round trip with the export, bad rows, limits, audit."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from memoryboard.models.namespaces import build_namespace
from memoryboard.models import AuditLog, LongTermMemory, MemoryEmbedding

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories/import"


def api_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def active(user):
    return sorted(
        (m.agent_id, m.memory_type, m.content)
        for m in LongTermMemory.objects.filter(namespace__endswith=f'"user:{user.pk}","memories"]', archived=False)
    )


def test_round_trip_export_delete_all_import(login, alice, make_memory):
    make_memory(alice, "I am a Rust developer", memory_type="FACT")
    make_memory(alice, "Prefers short answers", memory_type="PREFERENCE")
    make_memory(alice, "Deploys with `make release`", memory_type="PROCEDURE", agent="coder")
    make_memory(alice, "用户上周去了杭州", memory_type="EPISODE")
    before = active(alice)
    web = login(alice)
    exported = json.loads(web.get("/me/memories/export/").content)
    deleted = web.post("/me/memories/bulk/", {"action": "delete", "scope": "filter", "confirm": "True"})
    assert deleted.status_code == 302 and active(alice) == []

    api = api_for(alice)
    preview = api.post(URL, {"items": exported["memories"]}, format="json")
    assert preview.status_code == 200, preview.content
    # The deleted items are still there (recently deleted): the import brings them back, no copies.
    body = preview.json()
    outcome = body.pop("outcome")
    assert body == {"new": 0, "duplicate": 0, "restored": 4, "invalid": [], "imported": 0,
                    "archived_skipped": 0, "dry_run": True}
    assert len(outcome["restored"]) == 4 and not outcome["created"]  # what the import then does
    assert active(alice) == []  # a dry run (the default) writes nothing

    applied = api.post(URL, {"items": exported["memories"], "dry_run": False}, format="json")
    assert applied.status_code == 200 and applied.json()["imported"] == 4
    assert active(alice) == before
    imported = LongTermMemory.objects.filter(archived=False)
    created = {m.content: m.created_at.isoformat() for m in imported}
    assert created == {item["content"]: item["created_at"] for item in exported["memories"]}
    assert MemoryEmbedding.objects.filter(memory_id__in=[m.pk for m in imported]).count() == 4
    assert LongTermMemory.objects.count() == 4
    assert AuditLog.objects.filter(action="restore", actor=alice).count() == 4
    assert AuditLog.objects.filter(action="bulk", object_type="import", object_id=str(alice.pk)).count() == 1

    again = api.post(URL, {"items": exported["memories"], "dry_run": False}, format="json")
    assert again.json()["duplicate"] == 4 and again.json()["imported"] == 0
    assert len(active(alice)) == 4


def test_plain_list_into_the_callers_own_namespace_ignoring_ids_and_users(alice, bob, make_memory):
    theirs = make_memory(bob, "Bob's vault code is 4321")
    items = [
        {"content": "Likes jazz", "type": "preference", "id": theirs.pk,
         "namespace": build_namespace(agent_namespace="chat", user_id=str(bob.pk)).as_text(), "user_id": str(bob.pk)},
        {"content": "Works at ACME"},
    ]
    response = api_for(alice).post(URL, {"items": items, "dry_run": False}, format="json")
    assert response.status_code == 200, response.content
    assert active(alice) == [("chat", "FACT", "Works at ACME"), ("chat", "PREFERENCE", "Likes jazz")]
    theirs.refresh_from_db()
    assert theirs.content == "Bob's vault code is 4321" and active(bob) == [("chat", "FACT", "Bob's vault code is 4321")]


def test_each_bad_row_is_reported_and_nothing_is_written(alice):
    items = [
        {"content": "fine"},
        {"content": ""},
        {"content": "x", "type": "OPINION"},
        "just a string",
        {"content": "y", "created_at": "yesterday"},
        {"content": "z", "agent": "nobody"},
        {"content": "w", "created_at": "2999-01-01T00:00:00Z"},
    ]
    preview = api_for(alice).post(URL, {"items": items}, format="json").json()
    assert [(e["index"], e["field"]) for e in preview["invalid"]] == [
        (1, "content"), (2, "type"), (3, "item"), (4, "created_at"), (5, "agent"), (6, "created_at")]
    assert preview["new"] == 1
    applied = api_for(alice).post(URL, {"items": items, "dry_run": False}, format="json")
    assert applied.status_code == 400
    body = applied.json()
    assert "items[2].type" in body["error"]["fields"] and body["imported"] == 0
    assert not LongTermMemory.objects.exists() and not AuditLog.objects.exists()


def test_duplicates_skip_or_overwrite(alice, make_memory):
    existing = make_memory(alice, "I like green tea", memory_type="FACT")
    items = [{"content": "i like green tea.", "type": "PREFERENCE"}, {"content": "I like green tea!"}, {"content": "new"}]
    skip = api_for(alice).post(URL, {"items": items, "dry_run": False}, format="json").json()
    assert (skip["new"], skip["duplicate"], skip["imported"]) == (1, 2, 1)
    existing.refresh_from_db()
    assert (existing.memory_type, existing.content) == ("FACT", "I like green tea")
    over = api_for(alice).post(URL, {"items": items[:1], "mode": "overwrite", "dry_run": False}, format="json").json()
    assert (over["duplicate"], over["imported"]) == (1, 1)
    existing.refresh_from_db()
    assert (existing.memory_type, existing.content) == ("PREFERENCE", "i like green tea.")
    assert AuditLog.objects.filter(object_id=existing.pk, action="update").exists()


def test_item_limit_and_size_limits(alice, make_memory, settings, tmp_path):
    from memoryboard.agents_config import reset_agents_config

    path = tmp_path / "agents.yaml"
    path.write_text("agent:\n  agents:\n    chat: {long-term-memory: {enabled: true, namespace: chat, max-items: 3}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    make_memory(alice, "already here")
    items = [{"content": f"item {i}"} for i in range(4)]
    preview = api_for(alice).post(URL, {"items": items}, format="json").json()
    assert preview["new"] == 2 and [(e["index"], e["field"]) for e in preview["invalid"]] == [(2, "agent"), (3, "agent")]
    assert api_for(alice).post(URL, {"items": items, "dry_run": False}, format="json").status_code == 400
    assert LongTermMemory.objects.count() == 1
    too_many = api_for(alice).post(URL, {"items": [{"content": "x"}] * 5001}, format="json")
    assert too_many.status_code == 400 and "items" in too_many.json()["error"]["fields"]
    for body, field in [({"items": []}, "items"), ({"items": {"a": 1}}, "items"), ({"items": [{}], "mode": "merge"}, "mode"),
                        ({"items": [{"content": "x"}], "namespace": "x"}, "namespace")]:
        response = api_for(alice).post(URL, body, format="json")
        assert response.status_code == 400 and field in response.json()["error"]["fields"], body
    reset_agents_config()


def test_only_staff_import_for_another_user(alice, bob, support_user, developer):
    body = {"items": [{"content": "Bob speaks Dutch"}], "user": str(bob.pk), "dry_run": False}
    refused = api_for(alice).post(URL, body, format="json")
    assert refused.status_code == 403 and "user" in refused.json()["error"]["fields"]
    # Developers read everyone's items but import only into their own (roles.may_write_memories_of).
    assert api_for(developer).post(URL, body, format="json").status_code == 403
    assert not LongTermMemory.objects.exists()
    assert api_for(support_user).post(URL, body, format="json").status_code == 200
    assert active(bob) == [("chat", "FACT", "Bob speaks Dutch")]
    assert AuditLog.objects.get(action="create", reason="import").actor == support_user


def test_anonymous_is_refused():
    assert APIClient().post(URL, {"items": [{"content": "x"}]}, format="json").status_code == 401


def test_duplicates_are_found_whatever_the_namespace_spelling(alice):
    from memoryboard.ltm.write.items import memory_build
    from memoryboard.ltm.store.upsert import memory_upsert_many

    spaced = memory_build(namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)),
                          content="Writes Go at work", memory_type="FACT", source="auto_extract", agent_id="chat")
    spaced.namespace = f'["agent:chat", "user:{alice.pk}", "memories"]'  # as the seed prints it
    memory_upsert_many([spaced])
    summary = api_for(alice).post(URL, {"items": [{"content": "writes go at work"}]}, format="json").json()
    assert (summary["new"], summary["duplicate"]) == (0, 1)
