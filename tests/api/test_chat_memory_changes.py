"""POST /api/v1/agents/{agent}/chat says what the turn changed in memory (``memory_changes``: saved, replaced,
pending, …) with each item's API URL, so a client can show "Memory updated"; documented in the OpenAPI schema."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memoryboard.agents_config import reset_agents_config
from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db

URL = "/api/v1/agents/{}/chat"
AGENTS_YAML = """
agent:
  agents:
    chat: {memory-tools: true, long-term-memory: {enabled: true, namespace: chat, max-items: 200}}
    careful: {memory-tools: true, long-term-memory: {enabled: true, namespace: careful, memory-review: all}}
"""


@pytest.fixture(autouse=True)
def agents(settings, tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS_YAML, encoding="utf-8")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield
    reset_agents_config()


def api_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_saved_memory_is_named_with_its_url(alice):
    api = api_for(alice)
    body = api.post(URL.format("chat"), {"message": "Please remember that I am a Rust developer"}, format="json").json()
    saved = LongTermMemory.objects.get()
    assert body["memory_changes"] == [{
        "change": "saved", "id": saved.pk, "content": "I am a Rust developer", "type": saved.memory_type,
        "state": "active", "url": f"http://testserver/api/v1/memories/{saved.pk}/"}]
    item = api.get(body["memory_changes"][0]["url"])
    assert item.status_code == 200 and item.json()["id"] == saved.pk  # the link opens the item


def test_a_replaced_memory_names_what_took_its_place(alice, make_memory):
    old = make_memory(alice, "I am a Java developer")
    body = api_for(alice).post(URL.format("chat"), {"message": "Please remember that I am a Rust developer now"},
                               format="json").json()
    changes = {c["change"]: c for c in body["memory_changes"]}
    assert set(changes) == {"saved", "replaced"}, body["memory_changes"]
    assert changes["replaced"]["id"] == old.pk and changes["replaced"]["content"] == "I am a Java developer"
    assert changes["replaced"]["replaced_by"] == changes["saved"]["id"]
    assert changes["replaced"]["replaced_by_url"].endswith(f"/api/v1/memories/{changes['saved']['id']}/")
    assert LongTermMemory.objects.get(pk=old.pk).archived_reason == "superseded"


def test_an_item_waiting_for_review_is_pending_and_a_question_changes_nothing(alice):
    api = api_for(alice)
    body = api.post(URL.format("careful"), {"message": "Please remember that I am a Rust developer"},
                    format="json").json()
    assert [(c["change"], c["state"]) for c in body["memory_changes"]] == [("pending", "pending_review")]
    quiet = api.post(URL.format("chat"), {"message": "What time is it?"}, format="json").json()
    assert quiet["memory_changes"] == []


def test_the_schema_documents_memory_changes(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    output = schema["components"]["schemas"]["AgentChatOutput"]
    assert "memory_changes" in output["properties"] and "memory_changes" in output.get("required", [])
    change = schema["components"]["schemas"]["MemoryChange"]
    assert set(change["properties"]) >= {"change", "id", "content", "type", "state", "url", "replaced_by"}
