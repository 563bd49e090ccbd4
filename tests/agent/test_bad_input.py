"""Bad input to the agent endpoints is a 400 naming the field, before anything is stored; an upstream
reply over the documented cap is a 502 that says so; ids stored before ids were checked still render."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from memoryboard.models import ChatMessage, ConversationOwner, MemoryAccess

HEADER = "X-Memoryboard-Conversation-Id"
BAD_IDS = ["a/b", "../etc", ".", "has space", "tab\there", "line\nbreak", "q?x=1", "frag#1", "%2F", "x" * 256, "中文"]


@pytest.fixture
def token_api(alice):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer " + Token.objects.get_or_create(user=alice)[0].key)
    return client


def nothing_stored():
    return ChatMessage.objects.count() == 0 and ConversationOwner.objects.count() == 0


@pytest.mark.parametrize("bad", BAD_IDS)
def test_chat_api_refuses_an_unroutable_conversation_id(api, bad):
    response = api.post("/api/v1/agents/chat/chat", {"message": "hello", "conversation_id": bad}, format="json")
    assert response.status_code == 400, response.content
    assert list(response.json()["error"]["fields"]) == ["conversation_id"]
    assert nothing_stored()


@pytest.mark.parametrize("good", ["c-1", "0f3c9a52e1b44b6e9d1c7e0a8b2f4d61", "conv_1.2:3@x+y=z~w", "_x"])
def test_chat_api_accepts_ids_of_the_documented_alphabet(api, good):
    response = api.post("/api/v1/agents/chat/chat", {"message": "hello", "conversation_id": good}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["conversation_id"] == good


@pytest.mark.parametrize("bad", ["a/b", "..", "x y", "x" * 256])
def test_v1_refuses_an_unroutable_conversation_id_in_metadata_and_in_the_header(token_api, bad):
    body = {"model": "chat", "messages": [{"role": "user", "content": "hi"}], "metadata": {"conversation_id": bad}}
    response = token_api.post("/v1/chat/completions", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "metadata.conversation_id"
    if "\n" not in bad:
        body.pop("metadata")
        response = token_api.post("/v1/chat/completions", body, format="json", **{"HTTP_" + HEADER.upper().replace("-", "_"): bad})
        assert response.status_code == 400
        assert response.json()["error"]["param"] == HEADER
    assert nothing_stored()


def test_v1_refuses_an_orphan_tool_message_before_storing_or_calling_upstream(openai_settings, token_api):
    body = {"model": "chat", "messages": [
        {"role": "user", "content": "What is the weather?"},
        {"role": "tool", "tool_call_id": "call_nobody_made", "content": "sunny"},
    ]}
    response = token_api.post("/v1/chat/completions", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "messages[1].tool_call_id" and "call_nobody_made" in error["message"]
    # A tool message answering a call of an earlier assistant message, not the one just before it.
    body["messages"] = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "user", "content": "and tomorrow?"},
        {"role": "tool", "tool_call_id": "call_1", "content": "rain"},
    ]
    response = token_api.post("/v1/chat/completions", body, format="json")
    assert response.status_code == 400 and response.json()["error"]["param"] == "messages[5].tool_call_id"
    assert nothing_stored() and openai_settings.chat_requests() == []


def test_v1_accepts_tool_results_answering_the_assistant_calls(openai_settings, token_api):
    openai_settings.push_reply(content="Sunny in Paris.")
    body = {"model": "plain", "messages": [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]}
    response = token_api.post("/v1/chat/completions", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["choices"][0]["message"]["content"] == "Sunny in Paris."


@pytest.mark.parametrize("endpoint", ["chat", "v1"])
def test_an_upstream_reply_over_the_cap_is_a_502_that_says_so_and_is_not_stored(
        openai_settings, settings, api, token_api, endpoint):
    settings.MEMORYBOARD_MAX_REPLY_CHARS = 1000
    openai_settings.push_reply(content="x" * 1001)
    if endpoint == "chat":
        response = api.post("/api/v1/agents/plain/chat", {"message": "tell me everything"}, format="json")
    else:
        response = token_api.post("/v1/chat/completions", {
            "model": "plain", "messages": [{"role": "user", "content": "tell me everything"}]}, format="json")
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "llm_reply_too_large"
    assert "1000" in error["message"] and "MEMORYBOARD_MAX_REPLY_CHARS" in error["message"]
    assert list(ChatMessage.objects.values_list("role", flat=True)) == [ChatMessage.Role.USER]


def test_a_reply_at_the_cap_is_stored(openai_settings, settings, api):
    settings.MEMORYBOARD_MAX_REPLY_CHARS = 1000
    openai_settings.push_reply(content="y" * 1000)
    response = api.post("/api/v1/agents/plain/chat", {"message": "tell me"}, format="json")
    assert response.status_code == 200
    assert ChatMessage.objects.get(role=ChatMessage.Role.ASSISTANT).content == "y" * 1000


def test_ids_stored_before_the_check_still_render_for_their_owner(login, alice):
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.items import memory_create

    stored = {}
    for bad in ("legacy/with/slashes", "line\nbreak"):
        ChatMessage.objects.create(conversation_id=bad, agent_id="chat", user_id=str(alice.pk),
                                   role=ChatMessage.Role.USER, content=f"hello from {bad!r}")
        memory = memory_create(namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)),
                               content=f"Alice said something in {bad!r}", memory_type="FACT", source="auto_extract",
                               agent_id="chat", conversation_id=bad)
        MemoryAccess.objects.create(memory_id=memory.pk, agent_id="chat", conversation_id=bad,
                                    kind=MemoryAccess.Kind.INJECTION)
        stored[bad] = memory
    client = login(alice)
    page = client.get("/me/memories/")
    assert page.status_code == 200
    assert 'href="/me/conversations/legacy/with/slashes/"' in page.content.decode()
    for memory in stored.values():
        assert client.get(f"/me/memories/{memory.pk}/").status_code == 200
    conversation = client.get("/me/conversations/legacy/with/slashes/")
    assert conversation.status_code == 200 and "hello from" in conversation.content.decode()


@pytest.mark.mysql
def test_a_reply_at_the_default_cap_fits_the_databases_packet_limit(openai_settings, settings, api):
    """The documented default (MEMORYBOARD_MAX_REPLY_CHARS) is stored whole by the server the tests run on,
    even in 4-byte characters; one character more is the 502, never the misleading 503."""
    from django.db import connection

    if connection.vendor != "mysql":
        pytest.skip("the packet limit is MariaDB's/MySQL's (max_allowed_packet)")
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@max_allowed_packet")
        packet = int(cursor.fetchone()[0])
    cap = settings.MEMORYBOARD_MAX_REPLY_CHARS
    assert cap * 4 < packet, f"the default cap ({cap} characters) does not fit max_allowed_packet ({packet} bytes)"
    openai_settings.push_reply(content="😀" * cap)
    assert api.post("/api/v1/agents/plain/chat", {"message": "emoji please"}, format="json").status_code == 200
    assert len(ChatMessage.objects.get(role=ChatMessage.Role.ASSISTANT).content) == cap
    openai_settings.push_reply(content="😀" * (cap + 1))
    response = api.post("/api/v1/agents/plain/chat", {"message": "more"}, format="json")
    assert response.status_code == 502 and response.json()["error"]["code"] == "llm_reply_too_large"
