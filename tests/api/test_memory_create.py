"""POST /api/v1/memories/ (through the reconcile step) and the search's validity options."""

from __future__ import annotations

import pytest

from memoryboard.models import LongTermMemory
from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories/"


def create(client, **body):
    return client.post(URL, body, format="json")


def test_an_end_user_creates_in_their_own_namespace(as_user, alice):
    response = create(as_user(alice), content="I live in Shanghai", type="fact", agent="chat")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["decision"] == "new" and body["state"] == "active" and body["type"] == "FACT"
    assert body["user"] == str(alice.pk) and body["agent"] == "chat" and body["source"] == "manual"
    assert body["valid_from"] and body["valid_to"] is None and body["superseded_by"] is None
    assert LongTermMemory.objects.get(pk=body["id"]).namespace == f'["agent:chat","user:{alice.pk}","memories"]'


def test_an_update_supersedes_and_a_repeat_reinforces(as_user, alice):
    client = as_user(alice)
    old = create(client, content="I live in Shanghai").json()
    new = create(client, content="I moved to Berlin").json()
    assert new["decision"] == "update" and new["superseded"] == [old["id"]]
    stale = client.get(f"{URL}{old['id']}/").json()
    assert stale["state"] == "superseded" and stale["superseded_by"] == new["id"]
    assert stale["valid_to"] == new["valid_from"]
    again = create(client, content="I live in Berlin")
    assert again.status_code == 200 and again.json()["decision"] == "same" and again.json()["id"] == new["id"]
    assert LongTermMemory.objects.count() == 2


def test_expires_at_is_stored(as_user, alice):
    body = create(as_user(alice), content="I am in Tokyo this week", expires_at="2999-01-01T00:00:00Z").json()
    assert body["expires_at"] == "2999-01-01T00:00:00Z"
    assert LongTermMemory.objects.get(pk=body["id"]).value_json["expiresAt"] == "2999-01-01T00:00:00Z"


def test_support_staff_may_name_the_user(as_user, support_user, alice):
    response = create(as_user(support_user), content="I live in Shanghai", user=str(alice.pk))
    assert response.status_code == 201 and response.json()["user"] == str(alice.pk)


def test_an_end_user_cannot_write_for_someone_else(as_user, alice, bob):
    response = create(as_user(alice), content="I live in Shanghai", user=str(bob.pk))
    assert response.status_code == 403 and "user" in error_of(response)["fields"]
    assert not LongTermMemory.objects.exists()


def test_developers_create_only_their_own_and_anonymous_nothing(as_user, developer, alice):
    """The one role rule (roles.may_write_memories_of): developers read anyone's items, change only theirs."""
    refused = create(as_user(developer), content="I live in Shanghai", user=str(alice.pk))
    assert refused.status_code == 403 and "user" in error_of(refused)["fields"]
    assert create(as_user(None), content="I live in Shanghai").status_code in (401, 403)
    assert not LongTermMemory.objects.exists()
    own = create(as_user(developer), content="I live in Shanghai")
    assert own.status_code == 201 and own.json()["user"] == str(developer.pk)


@pytest.mark.parametrize("body,field", [
    ({}, "content"), ({"content": ""}, "content"), ({"content": 5}, "content"), ({"content": "x" * 20001}, "content"),
    ({"content": "x", "type": "OPINION"}, "type"), ({"content": "x", "agent": "nope"}, "agent"),
    ({"content": "x", "agent": "plain"}, "agent"), ({"content": "x", "expires_at": "soon"}, "expires_at"),
    ({"content": "x", "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
    ({"content": "x", "namespace": '["agent:chat","user:1","memories"]'}, "namespace"),
])
def test_bad_input_is_400_naming_the_field(as_user, alice, body, field, settings, tmp_path):
    from memoryboard.agents_config import reset_agents_config

    path = tmp_path / "agents.yaml"
    path.write_text("agent:\n  agents:\n    chat: {long-term-memory: {enabled: true, namespace: chat}}\n"
                    "    plain: {}\n", encoding="utf-8")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    response = as_user(alice).post(URL, body, format="json")
    reset_agents_config()
    assert response.status_code == 400, response.content
    assert field in error_of(response)["fields"]
    assert not LongTermMemory.objects.exists()


def test_search_returns_current_items_unless_asked(as_user, alice, use_embedder):
    client = as_user(alice)
    old = create(client, content="I live in Shanghai").json()
    new = create(client, content="I moved to Berlin").json()
    ids = [item["id"] for item in client.get(f"{URL}search/?q=where does the user live").json()]
    assert ids == [new["id"]]
    both = client.get(f"{URL}search/?q=where does the user live&include_superseded=true").json()
    assert {item["id"]: item["state"] for item in both} == {new["id"]: "active", old["id"]: "superseded"}


def test_search_as_of_answers_what_was_believed_then(as_user, alice, use_embedder):
    from datetime import timedelta

    from django.utils import timezone

    client = as_user(alice)
    old = create(client, content="I live in Shanghai").json()
    LongTermMemory.objects.filter(pk=old["id"]).update(value_json={
        **LongTermMemory.objects.get(pk=old["id"]).value_json, "validFrom": "2026-01-01T00:00:00Z"})
    new = create(client, content="I moved to Berlin").json()
    then = client.get(f"{URL}search/?q=where does the user live&as_of=2026-02-01").json()
    assert [item["id"] for item in then] == [old["id"]]
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()
    assert [item["id"] for item in client.get(f"{URL}search/?q=where does the user live&as_of={tomorrow}").json()] == [new["id"]]
    before = client.get(f"{URL}search/?q=where does the user live&as_of=2025-06-01").json()
    assert before == []


@pytest.mark.parametrize("query,field", [("&as_of=yesterday", "as_of"), ("&as_of=2026-13-01", "as_of"),
                                         ("&include_superseded=maybe", "include_superseded")])
def test_search_validity_options_bad_input(as_user, alice, query, field):
    response = as_user(alice).get(f"{URL}search/?q=x{query}")
    assert response.status_code == 400 and field in error_of(response)["fields"]


@pytest.mark.django_db(transaction=True)
def test_a_namespace_held_by_another_writer_is_503_and_nothing_written(as_user, alice, monkeypatch):
    import threading

    from memoryboard.ltm.store import locks
    from memoryboard.models.namespaces import build_namespace

    monkeypatch.setattr(locks, "LOCK_TIMEOUT_SECONDS", 1)
    held, release = threading.Event(), threading.Event()

    def writer():
        from django.db import connections

        try:
            with locks.namespace_lock(build_namespace(agent_namespace="chat", user_id=str(alice.pk))):
                held.set()
                release.wait(5)
        finally:
            connections.close_all()

    thread = threading.Thread(target=writer)
    thread.start()
    held.wait(5)
    try:
        response = create(as_user(alice), content="I live in Shanghai")
    finally:
        release.set()
        thread.join(5)
    assert response.status_code == 503 and error_of(response)["code"] == "busy"
    assert not LongTermMemory.objects.exists()
