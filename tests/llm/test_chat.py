from __future__ import annotations

import pytest

from memoryboard.llm.chat import ChatModel, ChatReply, OpenAIChatModel, ToolCall
from memoryboard.llm.offline_chat import OfflineChatModel
from memoryboard.llm.errors import LLMError

MEMORY_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "memory_save",
            "description": "Save a long-term memory about the user.",
            "parameters": {
                "type": "object",
                "properties": {"content": {"type": "string"}, "type": {"type": "string"}},
                "required": ["content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_search",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    },
]


@pytest.fixture
def model(client):
    return OpenAIChatModel(client, "fake-chat")


def test_protocol():
    assert isinstance(OfflineChatModel(), ChatModel)


def test_plain_reply(model, openai_server):
    openai_server.push_reply(content="Hello!")
    reply = model.complete([{"role": "user", "content": "hi"}])
    assert reply == ChatReply(content="Hello!", tool_calls=[])
    assert "tools" not in openai_server.chat_requests()[0]


def test_tool_calls_are_parsed_and_tools_are_sent(model, openai_server):
    openai_server.push_reply(
        tool_calls=[
            {"id": "call_1", "name": "memory_save", "arguments": {"content": "用户喜欢喝茶", "type": "PREFERENCE"}},
            {"name": "memory_search", "arguments": {"query": "tea"}},
        ]
    )
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "记住我喜欢喝茶"}]

    reply = model.complete(messages, tools=MEMORY_TOOLS)

    assert reply.content == ""
    assert reply.tool_calls[0] == ToolCall(
        id="call_1", name="memory_save", arguments={"content": "用户喜欢喝茶", "type": "PREFERENCE"}
    )
    assert reply.tool_calls[1].name == "memory_search"
    assert reply.tool_calls[1].arguments == {"query": "tea"}
    assert reply.tool_calls[1].id
    body = openai_server.chat_requests()[0]
    assert body["tools"] == MEMORY_TOOLS
    assert body["messages"] == messages


def test_reply_round_trips_as_a_message(model, openai_server):
    openai_server.push_reply(tool_calls=[{"id": "c1", "name": "memory_save", "arguments": {"content": "x"}}])
    openai_server.push_reply(content="saved")
    messages = [{"role": "user", "content": "remember x"}]
    reply = model.complete(messages, tools=MEMORY_TOOLS)
    messages += [reply.to_message(), {"role": "tool", "tool_call_id": "c1", "content": "ok"}]

    assert model.complete(messages, tools=MEMORY_TOOLS).content == "saved"
    sent = openai_server.chat_requests()[1]["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {"name": "memory_save", "arguments": '{"content": "x"}'}


def test_bad_tool_arguments_do_not_crash(model, openai_server):
    openai_server.push_fault("bad_tool_args")
    reply = model.complete([{"role": "user", "content": "remember"}], tools=MEMORY_TOOLS)
    (call,) = reply.tool_calls
    assert call.name == "memory_save"
    assert call.arguments == {}
    assert "JSON" in call.error


def test_non_object_tool_arguments(model, openai_server):
    openai_server.push_reply(tool_calls=[{"name": "memory_save", "arguments": "[1, 2]"}])
    (call,) = model.complete([{"role": "user", "content": "x"}], tools=MEMORY_TOOLS).tool_calls
    assert call.arguments == {}
    assert "object" in call.error


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("timeout", "timeout"), ("http500", "HTTP 500"), ("malformed", "malformed response"),
     ("empty_choices", "empty response")],
)
def test_faults(model, openai_server, fault, reason):
    openai_server.set_fault(fault)
    with pytest.raises(LLMError) as info:
        model.complete([{"role": "user", "content": "hi"}])
    assert info.value.reason == reason


# --- offline ---------------------------------------------------------------------------------


def test_offline_saves_what_to_remember_in_english():
    reply = OfflineChatModel().complete(
        [{"role": "user", "content": "Please remember that I prefer dark mode."}], tools=MEMORY_TOOLS
    )
    (call,) = reply.tool_calls
    assert call.name == "memory_save"
    assert call.arguments == {"content": "I prefer dark mode", "type": "PREFERENCE"}


def test_offline_saves_what_to_remember_in_chinese():
    reply = OfflineChatModel().complete([{"role": "user", "content": "请记住：我是Java后端开发者"}], tools=MEMORY_TOOLS)
    assert reply.tool_calls[0].arguments["content"] == "我是Java后端开发者"
    assert reply.tool_calls[0].arguments["type"] == "FACT"


def test_offline_only_sends_arguments_the_tool_declares():
    tools = [{"type": "function", "function": {"name": "memory_save", "parameters": {
        "type": "object", "properties": {"content": {"type": "string"}}}}}]
    reply = OfflineChatModel().complete([{"role": "user", "content": "remember I like tea"}], tools=tools)
    assert reply.tool_calls[0].arguments == {"content": "I like tea"}


def test_offline_answers_after_the_tool_result():
    messages = [
        {"role": "user", "content": "记住我喜欢喝茶"},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "tool", "tool_call_id": "offline_call_0", "content": "saved"},
    ]
    reply = OfflineChatModel().complete(messages, tools=MEMORY_TOOLS)
    assert reply.tool_calls == []
    assert "离线" in reply.content


def test_offline_without_tools_or_request_replies_offline_with_memory_count():
    system = (
        "You are helpful.\n<long_term_memory>\n以下是你对该用户的长期记忆：\n"
        "1. [FACT] 用户是Java后端开发者 (相关度: 0.92)\n2. [PREFERENCE] 偏好代码示例 (相关度: 0.88)\n"
        "</long_term_memory>"
    )
    model = OfflineChatModel()
    english = model.complete([{"role": "system", "content": system}, {"role": "user", "content": "remember tea"}])
    assert english.tool_calls == []
    assert "offline" in english.content and "2 long-term memories" in english.content
    chinese = model.complete([{"role": "system", "content": system}, {"role": "user", "content": "你好"}],
                             tools=MEMORY_TOOLS)
    assert "离线" in chinese.content and "2 条" in chinese.content
    assert "memories" not in model.complete([{"role": "user", "content": "hello"}]).content


@pytest.mark.parametrize("text", ["Do you remember my name?", "I remembered to call mom", "你记住了吗"])
def test_offline_only_saves_requests_to_remember(text):
    reply = OfflineChatModel().complete([{"role": "user", "content": text}], tools=MEMORY_TOOLS)
    assert reply.tool_calls == []
