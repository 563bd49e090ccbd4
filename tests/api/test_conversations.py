"""Conversations and their messages, scoped by conversations.message_queryset_for."""

from __future__ import annotations

import pytest

from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db


def test_list_own_conversations(as_user, alice, bob, make_conversation):
    mine = make_conversation(alice, 3)
    make_conversation(bob, 2)
    response = as_user(alice).get("/api/v1/conversations/")
    assert response.status_code == 200
    rows = response.json()
    assert [row["conversation_id"] for row in rows] == [mine]
    assert rows[0]["messages"] == 3 and rows[0]["user_id"] == str(alice.pk)


def test_staff_list_all_with_limit(as_user, developer, alice, bob, make_conversation):
    make_conversation(alice, 3)
    make_conversation(bob, 2)
    client = as_user(developer)
    assert len(client.get("/api/v1/conversations/").json()) == 2
    assert len(client.get("/api/v1/conversations/?limit=1").json()) == 1
    assert client.get("/api/v1/conversations/?limit=0").status_code == 400


def test_messages_in_order_paginated(as_user, alice, conversation):
    client = as_user(alice)
    response = client.get(f"/api/v1/conversations/{conversation}/messages/?limit=5")
    assert response.status_code == 200
    body = response.json()
    assert [m["content"] for m in body["results"]] == [f"alice message {i}" for i in range(1, 6)]
    assert body["next"]
    rest = client.get(body["next"]).json()
    assert [m["content"] for m in rest["results"]] == [f"alice message {i}" for i in range(6, 9)]
    assert set(body["results"][0]) == {"id", "conversation_id", "agent_id", "user_id", "role", "content",
                                       "metadata", "created_at"}


def test_unknown_or_foreign_conversation_is_404(as_user, bob, conversation):
    client = as_user(bob)
    for url in (f"/api/v1/conversations/{conversation}/messages/", "/api/v1/conversations/nope/messages/"):
        response = client.get(url)
        assert response.status_code == 404
        assert "alice" not in response.content.decode()
        error_of(response)
