"""An agent turn holds no write transaction while the model is awaited: it reads and calls the model first,
then writes in one short transaction that re-checks what changed meanwhile (real transactions: the
database's own, not the test's)."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection

from memoryboard.llm.chat import OpenAIChatModel
from memoryboard.models import ChatMessage, LongTermMemory, MemoryAccess, RetrievalReceipt, UserMemorySettings

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/agents/chat/chat"


@pytest.fixture
def model_calls(monkeypatch):
    """Each model call records whether a transaction was open; ``during`` runs a callable inside call n."""
    calls: list[bool] = []
    during: dict[int, object] = {}
    complete = OpenAIChatModel.complete

    def recording(self, messages, *, tools=None):
        calls.append(connection.in_atomic_block)
        if len(calls) in during:
            during[len(calls)]()
        return complete(self, messages, tools=tools)

    monkeypatch.setattr(OpenAIChatModel, "complete", recording)
    return calls, during


def test_the_model_is_awaited_outside_any_transaction_and_the_turn_is_stored(
        openai_settings, api, alice, make_memory, model_calls):
    calls, _ = model_calls
    make_memory(alice, "The user drinks green tea")
    openai_settings.push_reply(tool_calls=[{"name": "memory_save", "arguments": {"content": "User owns a cat"}},
                                           {"name": "memory_search", "arguments": {"query": "tea"}}])
    openai_settings.push_reply(content="Noted.")
    response = api.post(URL, {"message": "I have a cat. What do I drink?"}, format="json")
    assert response.status_code == 200, response.content
    assert len(calls) >= 2 and not any(calls)  # the two turn calls (and the inline extraction after the commit)
    saved = response.json()["tool_calls"][0]["result"]
    assert saved["saved"] is True
    assert LongTermMemory.objects.get(pk=saved["id"]).content == "User owns a cat"
    reply = ChatMessage.objects.get(role="ASSISTANT")
    assert reply.metadata["tool_calls"][0]["result"] == saved
    # The injection and the tool's search were logged and given receipts in the write phase.
    assert set(RetrievalReceipt.objects.values_list("kind", flat=True)) == {"injection", "tool_search"}
    assert MemoryAccess.objects.filter(kind="tool_search").exists()


def test_a_save_is_rechecked_when_written_the_user_turned_saving_off_meanwhile(
        openai_settings, api, alice, model_calls):
    _, during = model_calls
    during[2] = lambda: UserMemorySettings.objects.update_or_create(
        user_id=str(alice.pk), defaults={"save_memories": False})
    openai_settings.push_reply(tool_calls=[{"name": "memory_save", "arguments": {"content": "User owns a cat"}}])
    openai_settings.push_reply(content="Noted.")
    response = api.post(URL, {"message": "I have a cat"}, format="json")
    assert response.status_code == 200
    result = response.json()["tool_calls"][0]["result"]
    assert result == {"saved": False, "reason": "the user turned off saving new memories"}
    assert not LongTermMemory.objects.exists()
    assert ChatMessage.objects.get(role="ASSISTANT").metadata["tool_calls"][0]["result"] == result


def test_a_save_is_rechecked_when_written_a_duplicate_was_saved_meanwhile(
        openai_settings, api, alice, make_memory, model_calls):
    _, during = model_calls
    other = {}
    during[2] = lambda: other.setdefault("memory", make_memory(alice, "User owns a cat named Tom"))
    openai_settings.push_reply(tool_calls=[{"name": "memory_save", "arguments": {"content": "User owns a cat"}}])
    openai_settings.push_reply(content="Noted.")
    response = api.post(URL, {"message": "I have a cat"}, format="json")
    assert response.status_code == 200
    assert response.json()["tool_calls"][0]["result"] == {"saved": False, "duplicate_of": other["memory"].pk}
    assert LongTermMemory.objects.count() == 1


def test_two_saves_of_one_turn_are_deduplicated_before_anything_is_written(openai_settings, api, alice):
    openai_settings.push_reply(tool_calls=[{"name": "memory_save", "arguments": {"content": "User owns a cat"}},
                                           {"name": "memory_save", "arguments": {"content": "user owns a cat."}}])
    openai_settings.push_reply(content="Noted.")
    body = api.post(URL, {"message": "I have a cat"}, format="json").json()
    first, second = (call["result"] for call in body["tool_calls"])
    assert first["saved"] is True and second == {"saved": False, "duplicate_of": first["id"]}
    assert LongTermMemory.objects.count() == 1


def test_the_v1_endpoint_awaits_the_model_outside_any_transaction(openai_settings, live_server, alice, model_calls):
    import openai
    from rest_framework.authtoken.models import Token

    calls, _ = model_calls
    client = openai.OpenAI(base_url=f"{live_server.url}/v1", api_key=Token.objects.create(user=alice).key,
                           max_retries=0, timeout=20)
    openai_settings.push_reply(content="Hello!")
    raw = client.chat.completions.with_raw_response.create(
        model="chat", messages=[{"role": "user", "content": "hi"}])
    assert raw.parse().choices[0].message.content == "Hello!"
    assert calls and not any(calls)
    conversation = raw.headers["x-memoryboard-conversation-id"]
    assert list(ChatMessage.objects.filter(conversation_id=conversation).order_by("id")
                .values_list("role", "content")) == [("USER", "hi"), ("ASSISTANT", "Hello!")]


def test_a_locked_database_in_the_write_phase_is_a_503_with_retry_after(openai_settings, api, alice, monkeypatch):
    create = ChatMessage.objects.create

    def locked(**kwargs):
        if kwargs.get("role") == ChatMessage.Role.ASSISTANT:
            raise OperationalError("database is locked")
        return create(**kwargs)

    monkeypatch.setattr(ChatMessage.objects, "create", locked)
    openai_settings.push_reply(content="Hello")
    response = api.post(URL, {"message": "hi", "conversation_id": "c-1"}, format="json")
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert response.json()["conversation_id"] == "c-1"
    assert list(ChatMessage.objects.values_list("role", flat=True)) == ["USER"]


def test_a_locked_database_on_a_page_is_a_503_with_retry_after_not_a_500(client, alice, make_memory, monkeypatch):
    from memoryboard.web.my_memories import detail

    memory = make_memory(alice, "The user drinks green tea")
    client.force_login(alice)

    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(detail, "memory_update", locked)
    client.raise_request_exception = False
    response = client.post(f"/me/memories/{memory.pk}/edit/", {"content": "The user drinks black tea"})
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0


def test_online_a_save_in_a_turn_is_judged_in_the_think_phase_and_the_write_phase_follows_it(
        openai_settings, api, alice, make_memory, model_calls):
    """The reconcile judge decides a turn's memory_save too: called while the turn waits on models (no
    transaction open), its decision applied in the write phase. "User lives in …" holds no first-person
    slot, so the offline rules alone would keep both items."""
    import json

    from memoryboard.models import AuditLog

    calls, _ = model_calls
    old = make_memory(alice, "User lives in Shanghai")
    openai_settings.push_reply(tool_calls=[{"name": "memory_save",
                                            "arguments": {"content": "User relocated to Berlin"}}])
    openai_settings.push_reply(content=json.dumps(
        {"reasoning": "Both say where the user lives; the new one replaces it.", "verdict": "update",
         "target_ids": [old.pk]}))
    openai_settings.push_reply(content="Noted.")
    response = api.post(URL, {"message": "I moved to Berlin."}, format="json")
    assert response.status_code == 200, response.content
    saved = response.json()["tool_calls"][0]["result"]
    assert saved["saved"] is True and saved["superseded"] == [old.pk]
    old.refresh_from_db()
    assert old.archived and old.superseded_by == saved["id"]
    judge_request = openai_settings.chat_requests()[1]
    assert "User relocated to Berlin" in judge_request["messages"][1]["content"]
    assert not calls[1]  # the judge's call: no transaction open
    reconcile = AuditLog.objects.get(object_id=saved["id"], action="create").after["reconcile"]
    assert reconcile["judge"].startswith("llm:") and reconcile["reason"].startswith("Both say")


def test_online_the_judges_decision_is_not_followed_when_the_candidates_changed_before_the_write(
        openai_settings, api, alice, make_memory, model_calls):
    import json

    from memoryboard.models import AuditLog

    _, during = model_calls
    old = make_memory(alice, "User lives in Shanghai")
    during[3] = lambda: make_memory(alice, "User has a cat named Miso")  # after the judge, before the write
    openai_settings.push_reply(tool_calls=[{"name": "memory_save",
                                            "arguments": {"content": "User relocated to Berlin"}}])
    openai_settings.push_reply(content=json.dumps(
        {"reasoning": "The new one replaces it.", "verdict": "update", "target_ids": [old.pk]}))
    openai_settings.push_reply(content="Noted.")
    saved = api.post(URL, {"message": "I moved to Berlin."}, format="json").json()["tool_calls"][0]["result"]
    assert saved["saved"] is True
    # Decided again offline, against what is stored now: the move replaces where the user lived, not the cat.
    assert saved["superseded"] == [old.pk]
    assert LongTermMemory.objects.filter(archived=False, value_json__content="User has a cat named Miso").exists()
    reconcile = AuditLog.objects.get(object_id=saved["id"], action="create").after["reconcile"]
    assert reconcile["judge"] == "rules (the candidates changed after the judge's call)"
