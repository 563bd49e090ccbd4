"""A model's tool arguments go through the JSON guard (a failing call is a tool error result), and the turn's
writes (items saved by tools, the assistant row) are one transaction (issue 12)."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError

from memoryboard.models import ChatMessage, LongTermMemory

pytestmark = pytest.mark.django_db

URL = "/api/v1/agents/chat/chat"


@pytest.mark.parametrize("raw", [
    '{"content": "I like tea", "type": "FACT", "weight": Infinity}',
    '{"content": "I like tea", "weight": 1e400}',
    '{"content": "I like tea", "weight": NaN}',
    '{"content": "I like tea \\ud800"}',
    '{"content": ' + "[" * 1200 + "]" * 1200 + "}",
])
def test_invalid_tool_arguments_are_a_tool_error_and_the_reply_is_kept(openai_settings, api, alice, raw):
    openai_settings.push_reply(tool_calls=[{"name": "memory_save", "arguments": raw}])
    openai_settings.push_reply(content="Noted.")
    response = api.post(URL, {"message": "Remember that I like tea"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reply"] == "Noted."
    assert "arguments" in body["tool_calls"][0]["result"]["error"]
    assert not LongTermMemory.objects.exists()
    # The model was told: the tool message carries the error.
    tool_message = [m for m in openai_settings.chat_requests()[1]["messages"] if m["role"] == "tool"][0]
    assert "error" in json.loads(tool_message["content"])
    assert [r.role for r in ChatMessage.objects.order_by("id")] == ["USER", "ASSISTANT"]


def test_a_failing_assistant_row_rolls_back_the_items_the_turn_saved(openai_settings, api, alice, monkeypatch):
    openai_settings.push_reply(tool_calls=[{"name": "memory_save", "arguments": {"content": "I like tea"}}])
    openai_settings.push_reply(content="Noted.")
    create = ChatMessage.objects.create

    def fail_on_assistant(**kwargs):
        if kwargs.get("role") == ChatMessage.Role.ASSISTANT:
            raise OperationalError("connection lost")
        return create(**kwargs)

    monkeypatch.setattr(ChatMessage.objects, "create", fail_on_assistant)
    response = api.post(URL, {"message": "Remember that I like tea", "conversation_id": "c-9"}, format="json")
    assert response.status_code == 503
    body = response.json()
    assert body["conversation_id"] == "c-9"
    assert "saved" in body["error"]["message"] and "nothing was changed" not in body["error"]["message"]
    assert not LongTermMemory.objects.exists()  # the tool's save was part of the turn's transaction
    assert [r.role for r in ChatMessage.objects.all()] == ["USER"]  # the user's message is kept
