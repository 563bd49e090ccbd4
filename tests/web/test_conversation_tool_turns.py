"""An end user's conversation shows tool-call turns in words, expandable: no empty bubbles, no raw JSON."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from memoryboard.models import ChatMessage

pytestmark = pytest.mark.django_db


def test_tool_turns_are_said_in_words(login, alice):
    def add(role, content="", metadata=None):
        ChatMessage.objects.create(conversation_id="c-tools", agent_id="chat", user_id=str(alice.pk), role=role,
                                   content=content, metadata=metadata)

    add("USER", "what tea do I like?")
    add("ASSISTANT", "", {"tool_calls": [{"name": "memory_search", "arguments": {"query": "tea"},
                                          "result": {"results": [{"content": "likes green tea"},
                                                                 {"content": "no sugar"},
                                                                 {"content": "tea at 5"}]}}]})
    add("ASSISTANT", "", {"tool_calls": [{"id": "call_1", "type": "function",
                                          "function": {"name": "search_docs", "arguments": "{\"q\": \"tea\"}"}}]})
    add("TOOL", json.dumps([{"title": "Tea guide"}, {"title": "Brewing"}]), {"tool_call_id": "call_1"})
    add("ASSISTANT", "You like green tea.")
    html = login(alice).get(reverse("my-conversation", args=["c-tools"])).content.decode()
    assert "Looked in your memories for “tea”: 3 results" in html and "<li>likes green tea</li>" in html
    assert "The tool “search_docs”: 2 results" in html and "<li>Tea guide</li>" in html
    assert "Asked the app to run the tool “search_docs”." in html
    assert "&quot;title&quot;" not in html and '"title"' not in html  # no raw JSON
    assert '<div class="chat-text"></div>' not in html  # no empty bubble
