from __future__ import annotations

import time

import pytest

from memoryboard.llm.summarizer import OpenAISummarizer
from memoryboard.strategies.errors import SummarizerError
from memoryboard.strategies.summarizer import Summarizer


@pytest.fixture
def summarizer(client):
    return OpenAISummarizer(client, "fake-chat")


def test_implements_the_protocol(summarizer):
    assert isinstance(summarizer, Summarizer)
    assert summarizer.is_offline is False
    assert summarizer.name == "fake-chat"


def test_sends_instruction_as_system_and_text_as_user(summarizer, openai_server):
    openai_server.push_reply(content="  用户是 Java 开发者。 ")

    summary = summarizer.summarize("USER: 我是Java后端开发者", instruction="请总结对话")

    assert summary == "用户是 Java 开发者。"
    (body,) = openai_server.chat_requests()
    assert body["model"] == "fake-chat"
    assert body["messages"] == [
        {"role": "system", "content": "请总结对话"},
        {"role": "user", "content": "USER: 我是Java后端开发者"},
    ]
    assert openai_server.requests[0]["headers"]["authorization"] == "Bearer test-key"


def test_default_fake_reply_is_deterministic(summarizer):
    first = summarizer.summarize("some text", instruction="summarize")
    assert first == summarizer.summarize("some text", instruction="summarize")
    assert "some text" in first


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("timeout", "timeout"),
        ("http500", "HTTP 500"),
        ("http503", "HTTP 503"),
        ("malformed", "malformed response"),
        ("empty_choices", "empty response"),
    ],
)
def test_faults_raise_summarizer_error_with_reason(summarizer, openai_server, fault, reason):
    openai_server.push_fault(fault)
    started = time.monotonic()

    with pytest.raises(SummarizerError) as info:
        summarizer.summarize("text", instruction="summarize")

    assert info.value.reason == reason
    assert reason in str(info.value)
    assert time.monotonic() - started < 2.5  # no retries, client timeout honoured
    assert len(openai_server.requests) == 1


def test_empty_summary_is_an_error(summarizer, openai_server):
    openai_server.push_reply(content="   ")
    with pytest.raises(SummarizerError) as info:
        summarizer.summarize("text", instruction="summarize")
    assert info.value.reason == "empty response"


def test_connection_refused_is_connection_error(openai_server):
    from memoryboard.llm.openai_client import make_client

    dead = make_client(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=0.5, max_retries=0)
    with pytest.raises(SummarizerError) as info:
        OpenAISummarizer(dead, "m").summarize("text", instruction="summarize")
    assert info.value.reason == "connection error"


def test_recovers_after_a_fault(summarizer, openai_server):
    openai_server.push_fault("http500")
    openai_server.push_reply(content="ok")
    with pytest.raises(SummarizerError):
        summarizer.summarize("a", instruction="s")
    assert summarizer.summarize("b", instruction="s") == "ok"
