"""Numbers that agree: a conversation has one message count on every page (its stored rows, every role:
the instructions to the agent, the user's and the agent's turns, tool calls and tool results), and a pasted
trace has the count its author sees (an Anthropic request's top-level ``system`` is named beside it)."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlparse

import pytest
from django.urls import reverse

from memoryboard.models import ChatMessage

pytestmark = pytest.mark.django_db

CONVERSATION = "support-call-7"


def _tool_conversation(user) -> int:
    """A conversation with a system row, a tool call, its result and the answer; returns how many rows."""
    rows = [
        ("SYSTEM", "You are the help desk of a bank.", None),
        ("USER", "What did I say about my card?", None),
        ("ASSISTANT", "", {"tool_calls": [{"id": "call_1", "type": "function",
                                           "function": {"name": "lookup_notes", "arguments": '{"topic": "card"}'}}]}),
        ("TOOL", '{"notes": ["card lost on Monday"], "count": 1}', {"tool_call_id": "call_1"}),
        ("ASSISTANT", "You said your card was lost on Monday.", None),
        ("USER", "Thanks.", None),
    ]
    for role, content, metadata in rows:
        ChatMessage.objects.create(conversation_id=CONVERSATION, agent_id="chat", user_id=str(user.pk), role=role,
                                   content=content, metadata=metadata)
    return len(rows)


def _counts_shown(client, support_user, developer, alice) -> dict[str, int]:
    """The count each page shows for the conversation."""
    shown = {}
    client.force_login(support_user)
    page = client.get(reverse("person", args=[alice.pk])).content.decode()
    row = re.search(rf'<tr data-conversation="{CONVERSATION}">(.*?)</tr>', page, re.S).group(1)
    shown["user page row"] = int(re.findall(r"<td>(\d+)</td>", row)[0])
    shown["user page heading"] = int(re.search(r"(\d+) messages? <a", page).group(1))
    admin = client.get(reverse("admin:memoryboard_chatmessage_changelist"), {"conversation_id": CONVERSATION})
    shown["admin conversation"] = admin.context["cl"].result_count
    client.force_login(developer)
    page = client.get(reverse("playground"), {"conversation": CONVERSATION}).content.decode()
    shown["playground list"] = int(re.search(rf'value="{CONVERSATION}"[^>]*>[^<]*· (\d+) messages?</option>',
                                             page).group(1))
    shown["playground source"] = int(re.search(rf"Conversation {CONVERSATION}: (\d+) messages?\.", page).group(1))
    window = re.findall(r"System prompt \+ (\d+) messages?", page)
    shown["context window, before"] = int(window[0])
    api = client.get("/api/v1/conversations/").json()
    shown["API list"] = next(c["messages"] for c in api if c["conversation_id"] == CONVERSATION)
    client.force_login(alice)
    page = client.get(reverse("my-conversation", args=[CONVERSATION])).content.decode()
    shown["end user's conversation"] = int(re.search(r"(\d+) messages?</p>", page).group(1))
    return shown


def test_every_page_shows_one_count_for_a_conversation(client, support_user, developer, alice):
    stored = _tool_conversation(alice)
    shown = _counts_shown(client, support_user, developer, alice)
    assert shown == dict.fromkeys(shown, stored)


def test_the_agents_system_prompt_is_named_not_counted(login, developer, alice):
    """The context window's request starts with the prompt the agent builds for the call: named beside the
    count, so the window says the same number as the conversation list."""
    stored = _tool_conversation(alice)
    page = login(developer).get(reverse("playground"), {"conversation": CONVERSATION}).content.decode()
    assert f"System prompt + {stored} messages" in page
    assert f"System prompt + {stored + 1} messages" not in page


def _anthropic_trace(turns: int) -> dict:
    """An Anthropic request: a top-level system prompt and ``2 * turns`` messages, half of the exchanges a
    tool_use and its tool_result block."""
    messages = []
    for i in range(turns):
        if i % 2:
            messages += [{"role": "user", "content": [{"type": "text", "text": f"Question {i}?"}]},
                         {"role": "assistant", "content": f"Answer {i}."}]
        else:
            messages += [
                {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                                  {"type": "tool_use", "id": f"t{i}", "name": "search",
                                                   "input": {"q": str(i)}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                              "content": [{"type": "text", "text": f"result {i}"}]}]},
            ]
    return {"model": "claude", "system": "Be brief.",
            "messages": [{"role": "user", "content": "Start."}, *messages[:-1]]}


def _paste(client, body) -> str:
    response = client.post(reverse("playground"), {"messages_json": json.dumps(body)})
    assert response.status_code == 302, response.content.decode()[:300]
    return parse_qs(urlparse(response["Location"]).query)["trace"][0]


def test_an_anthropic_trace_counts_what_was_pasted(login, developer):
    body = _anthropic_trace(16)
    assert len(body["messages"]) == 32
    client = login(developer)
    trace = _paste(client, body)
    page = client.get(reverse("playground"), {"trace": trace}).content.decode()
    assert "Pasted input: 32 messages + system prompt." in page
    assert re.search(r"<dt>Messages</dt><dd>32 \+ system prompt</dd>", page)
    assert "33 messages" not in page
    replay = client.get(reverse("playground-replay"), {"trace": trace, "strategy": "TRIM"}).content.decode()
    assert "32 messages + system prompt, " in replay


def test_an_openai_trace_counts_its_system_message(login, developer):
    """In OpenAI's format the system prompt is one of the messages: counted as pasted."""
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."}]
    client = login(developer)
    page = client.get(reverse("playground"), {"trace": _paste(client, messages)}).content.decode()
    assert "Pasted input: 3 messages." in page and "system prompt." not in page
