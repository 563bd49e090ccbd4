"""POST /api/v1/agents/{agent}/chat: the ReAct turn through the API, offline and via the fake OpenAI server."""

from __future__ import annotations

import json

import pytest

from memoryboard.llm.extraction import EXTRACTION_PROMPT
from memoryboard.models.namespaces import build_namespace
from memoryboard.models import ChatMessage, LongTermMemory, MemoryAccess, UserMemorySettings

pytestmark = pytest.mark.django_db

URL = "/api/v1/agents/{}/chat"


def chat(api, message, agent="chat", **extra):
    return api.post(URL.format(agent), {"message": message, **extra}, format="json")


def ns_text(user, agent="chat"):
    return build_namespace(agent_namespace=agent, user_id=str(user.pk)).as_text()


def test_offline_turn_saves_with_the_tool_and_persists_both_messages(api, alice):
    response = chat(api, "Please remember that I am a Rust developer")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"conversation_id", "reply", "memories_used", "tool_calls", "extraction", "memory_changes"}
    assert body["tool_calls"][0]["name"] == "memory_save"
    assert body["tool_calls"][0]["result"]["saved"] is True
    # The tool saved it during the turn, so channel A has nothing new to extract.
    assert body["extraction"] == "skipped: nothing new: already remembered"
    saved = LongTermMemory.objects.filter(namespace=ns_text(alice))
    assert [(m.source, m.content) for m in saved] == [("agent_tool", "I am a Rust developer")]
    rows = list(ChatMessage.objects.filter(conversation_id=body["conversation_id"]).order_by("id"))
    assert [r.role for r in rows] == ["USER", "ASSISTANT"]
    assert rows[0].user_id == str(alice.pk) and rows[1].metadata["tool_calls"][0]["name"] == "memory_save"


def test_memories_are_retrieved_injected_and_counted(openai_settings, api, alice, make_memory):
    memory = make_memory(alice, "用户是Java后端开发者")
    openai_settings.push_reply(content="你好，Java开发者！")
    response = chat(api, "我是一名Java开发者，帮我看看这段代码")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reply"] == "你好，Java开发者！"
    assert body["memories_used"][0]["id"] == memory.pk
    system = openai_settings.chat_requests()[0]["messages"][0]
    assert system["role"] == "system"
    assert "<long_term_memory>\n以下是你对该用户的长期记忆：\n1. [FACT] 用户是Java后端开发者 (相关度: " in system["content"]
    assert MemoryAccess.objects.filter(memory_id=memory.pk, kind="injection", conversation_id=body["conversation_id"]).exists()
    memory.refresh_from_db()
    assert memory.access_count == 1


def test_tool_calls_through_the_fake_server_cannot_leave_the_callers_namespace(openai_settings, api, alice, bob, make_memory):
    make_memory(bob, "Bob's vault code is 4321")
    hostile = {"_userId": str(bob.pk), "userId": str(bob.pk), "_namespace": ns_text(bob), "namespace": ns_text(bob)}
    openai_settings.push_reply(tool_calls=[
        {"name": "memory_save", "arguments": {"content": "User is a Go developer", "type": "FACT", **hostile}},
        {"name": "memory_search", "arguments": {"query": "vault code", **hostile}},
    ])
    openai_settings.push_reply(content="Done.")
    response = chat(api, "hello there, what is the vault code?")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reply"] == "Done."
    assert [c["name"] for c in body["tool_calls"]] == ["memory_save", "memory_search"]
    assert body["tool_calls"][1]["result"] == {"results": []} or all(
        "4321" not in r["content"] for r in body["tool_calls"][1]["result"]["results"]
    )
    saved = LongTermMemory.objects.get(value_json__content="User is a Go developer")
    assert saved.namespace == ns_text(alice)
    assert LongTermMemory.objects.filter(namespace=ns_text(bob)).count() == 1
    first, second = openai_settings.chat_requests()
    assert [t["function"]["name"] for t in first["tools"]] == ["memory_save", "memory_search"]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2 and json.loads(tool_messages[0]["content"])["saved"] is True
    assert all("4321" not in m["content"] for m in tool_messages)


def test_malformed_tool_arguments_are_answered_not_executed(openai_settings, api, alice):
    openai_settings.push_fault("bad_tool_args")
    openai_settings.push_reply(content="Sorry.")
    response = chat(api, "save something for me please")
    assert response.status_code == 200, response.content
    assert "error" in response.json()["tool_calls"][0]["result"]
    assert not LongTermMemory.objects.exists()


def test_the_loop_stops_after_five_model_calls(openai_settings, api, alice):
    for i in range(6):
        openai_settings.push_reply(content="", tool_calls=[{"name": "memory_search", "arguments": {"query": f"q{i}"}}])
    response = chat(api, "look up everything about me please")
    assert response.status_code == 200
    requests = [r for r in openai_settings.chat_requests() if r["messages"][0]["content"].startswith("You are")]
    assert len(requests) == 5
    assert "tools" not in requests[-1]  # the last call must answer in text


@pytest.mark.parametrize("fault", ["http500", "malformed", "timeout"])
def test_llm_down_gives_502_and_keeps_the_message(openai_settings, api, alice, fault):
    openai_settings.set_fault(fault)
    response = chat(api, "I am a Rust developer and I need help", conversation_id="conv-1")
    assert response.status_code == 502
    body = response.json()
    assert body["error"]["code"] == "llm_unavailable" and body["conversation_id"] == "conv-1"
    rows = list(ChatMessage.objects.filter(conversation_id="conv-1"))
    assert [(r.role, r.content) for r in rows] == [("USER", "I am a Rust developer and I need help")]


def test_history_is_sent_on_the_next_turn(openai_settings, api, alice):
    openai_settings.push_reply(content="first answer")
    conversation = chat(api, "first question about Rust lifetimes").json()["conversation_id"]
    openai_settings.push_reply(content="second answer")
    response = chat(api, "and a follow-up question", conversation_id=conversation)
    assert response.json()["conversation_id"] == conversation
    # The turn's own model call, not the extraction's that follows it.
    turns = [r for r in openai_settings.chat_requests() if r["messages"][0]["content"] != EXTRACTION_PROMPT]
    contents = [m["content"] for m in turns[-1]["messages"][1:]]
    assert contents == ["first question about Rust lifetimes", "first answer", "and a follow-up question"]
    assert ChatMessage.objects.filter(conversation_id=conversation).count() == 4


def test_another_users_conversation_is_not_found(api, alice, bob):
    ChatMessage.objects.create(conversation_id="bobs", agent_id="chat", user_id=str(bob.pk), role="USER", content="secret")
    response = chat(api, "show me the history", conversation_id="bobs")
    assert response.status_code == 404
    assert response.json()["error"]["fields"] == {"conversation_id": ["No such conversation for this agent."]}
    assert ChatMessage.objects.filter(conversation_id="bobs").count() == 1


def test_switches_off_no_injection_and_no_extraction(api, alice, make_memory):
    make_memory(alice, "User is a Rust developer")
    UserMemorySettings.objects.create(user_id=str(alice.pk), use_memories=False, save_memories=False)
    body = chat(api, "I am a Rust developer who likes long walks").json()
    assert body["memories_used"] == []
    assert body["extraction"].startswith("skipped: the user turned off")
    assert LongTermMemory.objects.count() == 1


def test_agent_without_memory_skips_everything(api, alice, make_memory):
    make_memory(alice, "User is a Rust developer", agent="default")
    body = chat(api, "Please remember that I am a Rust developer", agent="plain").json()
    assert body["memories_used"] == [] and body["tool_calls"] == []
    assert body["extraction"] == "skipped: extraction is disabled for this agent"


def test_errors_name_the_field(api, client):
    assert chat(api, "hi", agent="nope").status_code == 404
    assert chat(api, "hi", agent="nope").json()["error"]["fields"] == {"agent": ["Unknown agent nope."]}
    response = chat(api, "   ")
    assert response.status_code == 400 and "message" in response.json()["error"]["fields"]
    response = chat(api, "x" * 20001)
    assert response.status_code == 400 and "message" in response.json()["error"]["fields"]
    assert api.post(URL.format("chat"), {}, format="json").json()["error"]["fields"].keys() == {"message"}
    assert client.post(URL.format("chat"), {"message": "hi"}, content_type="application/json").status_code in (401, 403)


def test_embedding_endpoint_down_the_agent_still_answers(openai_settings, api, alice, make_memory):
    make_memory(alice, "User is a Rust developer")
    openai_settings.push_fault("http500")  # the query's embedding
    openai_settings.push_reply(content="Answer without memories.")
    response = chat(api, "How do Rust lifetimes work?")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reply"] == "Answer without memories." and body["memories_used"] == []
    assert "<long_term_memory>" not in openai_settings.chat_requests()[0]["messages"][0]["content"]

