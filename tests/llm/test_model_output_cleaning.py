"""One cleaning step for everything a model returns (``llm.openai_client.clean_model_text``): code points UTF-8
cannot hold (lone surrogates, which JSON lets a reply carry as ``\\ud800``) are replaced before anything is
stored, on every path that stores model output: the agent's reply and the extraction after it, ``/v1``
(streaming and not, tool calls too), the judge's reasoning behind ``POST /api/v1/memories/``, summaries of
the context pipeline (its cache) and of a memory strategy. Arbitrary text (hypothesis) through the real
``openai`` client and the fake endpoint: never a 500; a reply that cannot be used is a 502 with the user's
message kept."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from memoryboard.llm.openai_client import clean_model_text
from memoryboard.models import AuditLog, ChatMessage, LongTermMemory, SummaryCacheEntry

pytestmark = pytest.mark.django_db

# Any code point, surrogates included, with the troublesome ones often.
TEXT = st.lists(st.one_of(
    st.characters(exclude_categories=()),
    st.sampled_from(["\ud800", "\udfff", "\udc00\ud800", "\x00", "\u2028", "\ufffe", "\U0001f600", "\"", "\\"]),
), max_size=40).map("".join)
EXAMPLES = hypothesis_settings(max_examples=8, deadline=None,
                               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

AGENTS = """
agent:
  agents:
    chat:
      memory-tools: true
      long-term-memory: {enabled: true, namespace: chat}
      context: {strategy: COMPOSITE, params: {steps: [SUMMARIZE, SLIDING_WINDOW],
                summarize: {threshold: 6, keep_last: 2}, sliding_window: {max_tokens: 100000}}}
"""


@pytest.fixture
def agents(settings, tmp_path):
    from memoryboard.agents_config import reset_agents_config

    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS)
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield
    reset_agents_config()


def _sent(text: str) -> str:
    """``text`` as the endpoint's JSON carries it (a surrogate pair written as two escapes is one character)."""
    return json.loads(json.dumps(text))


def _storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _client(user, *, token: bool = False) -> APIClient:
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    else:
        client.force_authenticate(user)
    return client


def _stored_texts() -> list[str]:
    texts = [m.content for m in LongTermMemory.objects.all()]
    texts += list(ChatMessage.objects.values_list("content", flat=True))
    texts += [json.dumps(m) for m in ChatMessage.objects.exclude(metadata=None).values_list("metadata", flat=True)]
    texts += list(AuditLog.objects.values_list("reason", flat=True))
    texts += [json.dumps(a) for a in AuditLog.objects.values_list("after", flat=True)]
    texts += list(SummaryCacheEntry.objects.values_list("summary", flat=True))
    return texts


def test_the_cleaning_step_replaces_only_what_utf8_cannot_hold():
    assert clean_model_text("ok \ud800 \udfff") == "ok \ufffd \ufffd"
    assert clean_model_text("😀 中文 \x00") == "😀 中文 \x00"
    assert clean_model_text(None) == ""


@given(reply=TEXT, extracted=TEXT)
@EXAMPLES
def test_agent_chat_stores_the_cleaned_reply_and_extraction(agents, openai_settings, alice, reply, extracted):
    openai_settings.reset()
    openai_settings.push_reply(content=reply)
    openai_settings.push_reply(content=json.dumps([{"type": "FACT", "content": f"User {extracted}"}]))
    conversation = f"c-{uuid.uuid4().hex}"
    response = _client(alice).post("/api/v1/agents/chat/chat", {"message": "I am a pilot and I fly gliders",
                                                                 "conversation_id": conversation}, format="json")
    assert response.status_code in (200, 502), response.content
    rows = ChatMessage.objects.filter(conversation_id=conversation).order_by("id")
    assert rows[0].content == "I am a pilot and I fly gliders"  # kept whatever the model said
    if response.status_code == 200:
        assert response.json()["reply"] == clean_model_text(_sent(reply)) == rows[1].content
    assert all(_storable(text) for text in _stored_texts())


@given(reply=TEXT, tool=TEXT, stream=st.booleans())
@EXAMPLES
def test_v1_stores_and_answers_the_cleaned_reply_streaming_or_not(agents, openai_settings, alice, reply, tool, stream):
    openai_settings.reset()
    openai_settings.push_reply(tool_calls=[{"name": f"t{tool}"[:64], "arguments": json.dumps({"q": tool})}])
    openai_settings.push_reply(content=reply)
    openai_settings.push_reply(content="[]")  # the extraction
    conversation = f"c-{uuid.uuid4().hex}"
    response = _client(alice, token=True).post("/v1/chat/completions", {
        "model": "chat", "stream": stream, "metadata": {"conversation_id": conversation},
        "messages": [{"role": "user", "content": "What do I fly?"}]}, format="json")
    assert response.status_code in (200, 502), response.content
    rows = ChatMessage.objects.filter(conversation_id=conversation).order_by("id")
    assert rows[0].content == "What do I fly?"
    if response.status_code == 200:
        if stream:
            body = b"".join(response.streaming_content).decode("utf-8")
            chunks = [json.loads(line[6:]) for line in body.split("\n") if line.startswith("data: {")]
            answered = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        else:
            answered = response.json()["choices"][0]["message"]["content"]
        assert answered == clean_model_text(_sent(reply)) == rows.last().content
    assert all(_storable(text) for text in _stored_texts())


@given(reasoning=TEXT, raw=st.booleans())
@EXAMPLES
def test_post_memories_stores_the_judges_cleaned_reasoning(agents, openai_settings, alice, reasoning, raw):
    openai_settings.reset()
    client = _client(alice)
    first = client.post("/api/v1/memories/", {"content": "User lives in Berlin", "agent": "chat"}, format="json")
    assert first.status_code in (200, 201), first.content
    verdict = json.dumps({"reasoning": reasoning, "verdict": "new", "target_ids": []})
    openai_settings.push_reply(content=reasoning if raw else verdict)
    response = client.post("/api/v1/memories/", {"content": "User works in Berlin", "agent": "chat"}, format="json")
    assert response.status_code in (200, 201), response.content
    assert all(_storable(text) for text in _stored_texts())


@given(summary=TEXT)
@EXAMPLES
def test_summaries_are_stored_cleaned(agents, openai_settings, alice, superuser, summary):
    openai_settings.reset()
    conversation = f"c-{uuid.uuid4().hex}"
    for i in range(10):
        ChatMessage.objects.create(conversation_id=conversation, agent_id="chat", user_id=str(alice.pk),
                                   role="USER" if i % 2 == 0 else "ASSISTANT", content=f"message {i}")
    # A memory strategy's summary, stored in the conversation.
    openai_settings.push_reply(content=summary)
    response = _client(superuser).post("/api/v1/strategies/memory/summarize/apply", {
        "conversation_id": conversation, "params": {"threshold": 4, "keep_last": 2}}, format="json")
    assert response.status_code == 200, response.content
    # The context pipeline's summary (its cache table) in the agent's next turn.
    openai_settings.push_reply(content=summary)
    openai_settings.push_reply(content="noted")
    turn = _client(alice).post("/api/v1/agents/chat/chat", {"message": "and now?", "conversation_id": conversation},
                               format="json")
    assert turn.status_code in (200, 502), turn.content
    assert all(_storable(text) for text in _stored_texts())
