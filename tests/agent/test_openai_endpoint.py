"""/v1/chat/completions and /v1/models with the real ``openai`` client (and LangChain's ChatOpenAI)
against the live dashboard, the fake OpenAI server as its upstream."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from memoryboard.models.namespaces import build_namespace
from memoryboard.models import ChatMessage, LongTermMemory
from tests.agent.conftest import AGENTS_YAML

pytestmark = pytest.mark.django_db(transaction=True)

HEADER = "X-Memoryboard-Conversation-Id"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture(autouse=True)
def agents_yaml(settings, tmp_path):
    """The agents of tests/agent plus ``trimmed``, whose context strategy keeps the first and last two."""
    from memoryboard.agents_config import reset_agents_config

    path = tmp_path / "agents.yaml"
    path.write_text(
        AGENTS_YAML + "    trimmed:\n      context: {strategy: TRIM, params: {keep_first: 1, keep_last: 2}}\n",
        encoding="utf-8",
    )
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield path
    reset_agents_config()


def token_for(user) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.get_or_create(user=user)[0].key


@pytest.fixture
def client_for(live_server):
    def make(user=None, *, key=None, async_=False):
        cls = openai.AsyncOpenAI if async_ else openai.OpenAI
        return cls(base_url=f"{live_server.url}/v1", api_key=key or token_for(user), max_retries=0, timeout=20)

    return make


def system_prompt(request_body) -> str:
    return "\n".join(m["content"] for m in request_body["messages"] if m["role"] == "system")


def test_models_lists_the_agents(client_for, alice):
    assert sorted(model.id for model in client_for(alice).models.list()) == ["chat", "plain", "quiet", "trimmed"]


def test_non_streaming_injects_memories_and_stores_both_turns(openai_settings, client_for, alice, make_memory):
    memory = make_memory(alice, "用户是Java后端开发者")
    openai_settings.push_reply(content="Hello, Java developer!")
    raw = client_for(alice).chat.completions.with_raw_response.create(
        model="chat", user="someone-else",
        messages=[{"role": "user", "content": "我是一名Java开发者，帮我看看这段代码"}],
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "Hello, Java developer!"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "chat"
    upstream = openai_settings.chat_requests()[0]
    assert "1. [FACT] 用户是Java后端开发者 (相关度: " in system_prompt(upstream)
    assert upstream["messages"][-1] == {"role": "user", "content": "我是一名Java开发者，帮我看看这段代码"}
    conversation = raw.headers[HEADER]
    assert completion.model_extra["memoryboard"]["conversation_id"] == conversation
    assert completion.model_extra["memoryboard"]["memories_used"] == [memory.pk]
    rows = list(ChatMessage.objects.filter(conversation_id=conversation).order_by("id"))
    assert [(r.role, r.content, r.user_id, r.agent_id) for r in rows] == [
        ("USER", "我是一名Java开发者，帮我看看这段代码", str(alice.pk), "chat"),
        ("ASSISTANT", "Hello, Java developer!", str(alice.pk), "chat"),
    ]


def test_streaming_sends_openai_chunks_and_usage(openai_settings, client_for, alice):
    reply = "A streamed answer that is longer than one chunk of sixteen characters."
    openai_settings.push_reply(content=reply)
    stream = client_for(alice).chat.completions.create(
        model="chat", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "Tell me something"}],
    )
    chunks = list(stream)
    content_chunks = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(content_chunks) > 1
    assert "".join(c.choices[0].delta.content for c in content_chunks) == reply
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert ChatMessage.objects.filter(role="ASSISTANT", content=reply, user_id=str(alice.pk)).count() == 1


def test_async_client_streaming_and_not(openai_settings, client_for, alice):
    client = client_for(alice, async_=True)

    async def run():
        openai_settings.push_reply(content="async plain")
        plain = await client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "one"}])
        openai_settings.push_reply(content="async streamed")
        stream = await client.chat.completions.create(
            model="chat", stream=True, messages=[{"role": "user", "content": "two"}])
        pieces = [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
        await client.close()
        return plain.choices[0].message.content, "".join(pieces)

    assert asyncio.run(run()) == ("async plain", "async streamed")
    assert ChatMessage.objects.filter(user_id=str(alice.pk), role="USER").count() == 2


def test_a_conversation_named_by_header_or_metadata_collects_the_turns(openai_settings, client_for, alice):
    client = client_for(alice)
    client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "first"}],
                                   extra_headers={HEADER: "conv-a"})
    client.chat.completions.create(
        model="chat", metadata={"conversation_id": "conv-a"},
        messages=[{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
                  {"role": "user", "content": "second"}],
    )
    rows = ChatMessage.objects.filter(conversation_id="conv-a").order_by("id")
    assert [(r.role, r.content) for r in rows if r.role == "USER"] == [("USER", "first"), ("USER", "second")]
    assert rows.count() == 4


def test_context_strategy_of_the_agent_is_applied(openai_settings, client_for, alice):
    history = []
    for index in range(6):
        history += [{"role": "user", "content": f"question {index}"}, {"role": "assistant", "content": f"answer {index}"}]
    client_for(alice).chat.completions.create(
        model="trimmed", messages=[{"role": "system", "content": "Client rules."}, *history,
                                   {"role": "user", "content": "last question"}])
    sent = openai_settings.chat_requests()[0]["messages"]
    assert [m["role"] for m in sent[:2]] == ["system", "system"] and sent[1]["content"] == "Client rules."
    assert [m["content"] for m in sent[2:]] == ["question 0", "answer 5", "last question"]


def test_memory_tools_run_inside_and_never_reach_the_client(openai_settings, client_for, alice, bob):
    hostile = {"content": "I am a Rust developer", "type": "FACT", "_userId": str(bob.pk), "namespace": "x"}
    openai_settings.push_reply(tool_calls=[{"name": "memory_save", "arguments": hostile}])
    openai_settings.push_reply(content="Saved.")
    completion = client_for(alice).chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "Remember that I am a Rust developer"}])
    assert completion.choices[0].message.content == "Saved."
    assert completion.choices[0].message.tool_calls is None
    mine = build_namespace(agent_namespace="chat", user_id=str(alice.pk)).as_text()
    assert list(LongTermMemory.objects.values_list("namespace", flat=True)) == [mine]
    second = openai_settings.chat_requests()[1]["messages"]
    assert second[-1]["role"] == "tool" and json.loads(second[-1]["content"])["saved"] is True
    assert {t["function"]["name"] for t in openai_settings.chat_requests()[0]["tools"]} == {"memory_save", "memory_search"}


def test_client_tools_are_passed_through_and_their_calls_returned_untouched(openai_settings, client_for, alice):
    client = client_for(alice)
    raw_arguments = '{"city":  "Paris"}'
    openai_settings.push_reply(tool_calls=[{"id": "call_w1", "name": "get_weather", "arguments": raw_arguments}])
    first = client.chat.completions.with_raw_response.create(
        model="chat", tools=[WEATHER_TOOL], messages=[{"role": "user", "content": "Weather in Paris?"}])
    conversation = first.headers[HEADER]
    message = first.parse().choices[0].message
    assert first.parse().choices[0].finish_reason == "tool_calls"
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls] == [
        ("call_w1", "get_weather", raw_arguments)]
    offered = {t["function"]["name"] for t in openai_settings.chat_requests()[0]["tools"]}
    assert offered == {"memory_save", "memory_search", "get_weather"}

    openai_settings.push_reply(content="It is sunny in Paris.")
    second = client.chat.completions.create(
        model="chat", tools=[WEATHER_TOOL], extra_headers={HEADER: conversation},
        messages=[
            {"role": "user", "content": "Weather in Paris?"},
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 21 C"},
        ],
    )
    assert second.choices[0].message.content == "It is sunny in Paris."
    upstream = openai_settings.chat_requests()[1]["messages"]
    assert upstream[-1] == {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 21 C"}
    assert upstream[-2]["tool_calls"][0]["id"] == "call_w1"
    rows = list(ChatMessage.objects.filter(conversation_id=conversation).order_by("id"))
    assert [r.role for r in rows] == ["USER", "ASSISTANT", "TOOL", "ASSISTANT"]
    assert rows[1].metadata["tool_calls"][0]["function"]["arguments"] == raw_arguments
    assert rows[2].metadata == {"tool_call_id": "call_w1"}


def test_client_tool_exchange_reaches_the_upstream_intact(openai_settings, client_for, alice):
    call = {"id": "call_w1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    exchange = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 21 C"},
    ]
    client_for(alice).chat.completions.create(model="chat", tools=[WEATHER_TOOL], messages=exchange)
    assert openai_settings.chat_requests()[0]["messages"][-3:] == exchange


def test_client_tools_stream_as_tool_call_deltas(openai_settings, client_for, alice):
    openai_settings.push_reply(tool_calls=[{"id": "call_s", "name": "get_weather", "arguments": '{"city":"Oslo"}'}])
    chunks = list(client_for(alice).chat.completions.create(
        model="chat", stream=True, tools=[WEATHER_TOOL], messages=[{"role": "user", "content": "Oslo weather?"}]))
    calls = [call for c in chunks if c.choices for call in (c.choices[0].delta.tool_calls or [])]
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [("call_s", "get_weather", '{"city":"Oslo"}')]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_another_users_token_never_sees_these_memories(openai_settings, client_for, alice, bob, make_memory):
    make_memory(alice, "Alice's secret project is Falcon")
    raw = client_for(alice).chat.completions.with_raw_response.create(
        model="chat", messages=[{"role": "user", "content": "What is my secret project Falcon about?"}])
    assert "Falcon" in system_prompt(openai_settings.chat_requests()[0])
    openai_settings.reset()
    client_for(bob).chat.completions.create(
        model="chat", user=str(alice.pk), metadata={"user_id": str(alice.pk)},
        messages=[{"role": "user", "content": "What is my secret project Falcon about?"}])
    assert "Falcon" not in system_prompt(openai_settings.chat_requests()[0])
    with pytest.raises(openai.NotFoundError) as caught:
        client_for(bob).chat.completions.create(
            model="chat", extra_headers={HEADER: raw.headers[HEADER]}, messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body["param"] == "metadata.conversation_id"
    assert ChatMessage.objects.filter(user_id=str(bob.pk), conversation_id=raw.headers[HEADER]).count() == 0


def test_bad_token_unknown_model_and_bad_messages_are_openai_errors(client_for, alice):
    with pytest.raises(openai.AuthenticationError):
        client_for(key="not-a-token").chat.completions.create(model="chat", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.AuthenticationError):
        client_for(key="not-a-token").models.list()
    with pytest.raises(openai.NotFoundError) as caught:
        client_for(alice).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert caught.value.code == "model_not_found" and caught.value.body["param"] == "model"
    bad = [
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": "user", "content": "x"}, {"role": "assistant", "content": None,
          "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]},
          {"role": "tool", "tool_call_id": "a", "content": "r"}], "messages[1].tool_calls[0].id"),
        ([{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}], "messages[1].role"),
        # An assistant's tool calls without their results (the orphan the other way round).
        ([{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
          {"role": "user", "content": "never mind"}], "messages[1].tool_calls[0].id"),
        ([{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "time", "arguments": "{}"}}]},
          {"role": "tool", "tool_call_id": "c1", "content": "sunny"}], "messages[1].tool_calls[1].id"),
        ([{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
          {"role": "assistant", "content": "y"}, {"role": "user", "content": "z"}], "messages[1].tool_calls[0].id"),
    ]
    for messages, param in bad:
        with pytest.raises(openai.BadRequestError) as caught:
            client_for(alice).chat.completions.create(model="chat", messages=messages)
        assert caught.value.body["param"] == param, messages
        assert caught.value.body["type"] == "invalid_request_error"
    with pytest.raises(openai.BadRequestError) as caught:
        client_for(alice).chat.completions.create(
            model="chat", messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "function", "function": {"name": "memory_save", "parameters": {}}}])
    assert caught.value.body["param"] == "tools[0].function.name"
    assert not ChatMessage.objects.exists()


def test_upstream_fault_keeps_the_message_and_answers_an_openai_error(openai_settings, client_for, alice):
    openai_settings.set_fault("http500")
    client = openai.OpenAI(base_url=client_for(alice).base_url, api_key=token_for(alice), max_retries=2, timeout=20)
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "are you there?"}])
    assert caught.value.status_code == 502 and caught.value.code == "llm_unavailable"
    conversation = caught.value.response.headers[HEADER]
    # Not retried by the client (x-should-retry: false): the message is stored once.
    assert [(r.role, r.content) for r in ChatMessage.objects.filter(conversation_id=conversation)] == [
        ("USER", "are you there?")]


def test_langchain_chat_openai_works_against_it(openai_settings, live_server, alice, make_memory):
    from langchain_openai import ChatOpenAI

    make_memory(alice, "The user prefers answers in French")
    openai_settings.push_reply(content="Bonjour !")
    model = ChatOpenAI(model="chat", base_url=f"{live_server.url}/v1", api_key=token_for(alice), max_retries=0)
    assert model.invoke("Say hello, I prefer French answers").content == "Bonjour !"
    assert "prefers answers in French" in system_prompt(openai_settings.chat_requests()[0])
    openai_settings.push_reply(content="Salut, ça va ?")
    assert "".join(chunk.content for chunk in model.stream("Say hello again")) == "Salut, ça va ?"


def test_streaming_request_with_an_upstream_timeout_is_an_error_not_a_broken_stream(openai_settings, client_for, alice):
    openai_settings.set_fault("timeout")
    with pytest.raises(openai.InternalServerError) as caught:
        client_for(alice).chat.completions.create(
            model="chat", stream=True, messages=[{"role": "user", "content": "still there?"}])
    assert caught.value.status_code == 502 and "timeout" in caught.value.message
    assert list(ChatMessage.objects.values_list("role", "content")) == [("USER", "still there?")]


def test_content_parts_reach_the_upstream_and_are_stored_as_text(openai_settings, client_for, alice):
    parts = [{"type": "text", "text": "Describe"}, {"type": "text", "text": "this diagram"}]
    client_for(alice).chat.completions.create(model="chat", messages=[{"role": "user", "content": parts}])
    assert openai_settings.chat_requests()[0]["messages"][-1] == {"role": "user", "content": parts}
    assert ChatMessage.objects.get(role="USER").content == "Describe\nthis diagram"


def test_hostile_json_is_an_openai_shaped_400(client_for, alice):
    nested = {"role": "user", "content": "x"}
    for _ in range(200):
        nested = {"wrap": nested}
    with pytest.raises(openai.BadRequestError) as caught:
        client_for(alice).chat.completions.create(model="chat", messages=[{"role": "user", "content": "x"}],
                                                  extra_body={"metadata": nested})
    assert caught.value.body["type"] == "invalid_request_error" and caught.value.body["param"]
    assert not ChatMessage.objects.exists()


def test_offline_extraction_is_queued_and_saves_for_the_tokens_user(client_for, alice):
    completion = client_for(alice).chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "I work as a nurse in Oslo and I love hiking."}])
    assert completion.model_extra["memoryboard"]["extraction"] == "queued"
    assert "offline" in completion.choices[0].message.content
    saved = LongTermMemory.objects.filter(namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)).as_text())
    assert saved.exists() and {m.source for m in saved} == {"auto_extract"}
