"""Fixtures and helpers shared by tests/api and tests/security (imported by their conftest.py)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

__all__ = ["api", "as_user", "conversation", "make_conversation", "_clear_cache", "error_of", "body_text"]


@pytest.fixture(autouse=True)
def _clear_cache():
    """Throttle counters live in the cache; every test starts from zero."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def as_user():
    """as_user(user) -> an APIClient signed in with a session (None: anonymous)."""

    def make(user=None) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def make_conversation(db):
    """make_conversation(user, n=8, conversation_id=None) -> the conversation id of n stored messages."""
    from memoryboard.models import ChatMessage

    def make(user, n: int = 8, *, conversation_id: str | None = None, agent: str = "chat") -> str:
        conversation_id = conversation_id or f"conv-{user.username}"
        roles = ["USER", "ASSISTANT"]
        ChatMessage.objects.bulk_create(
            [
                ChatMessage(
                    conversation_id=conversation_id,
                    agent_id=agent,
                    user_id=str(user.pk),
                    role=roles[i % 2],
                    content=f"{user.username} message {i + 1}",
                )
                for i in range(n)
            ]
        )
        return conversation_id

    return make


@pytest.fixture
def conversation(alice, make_conversation) -> str:
    return make_conversation(alice)


def error_of(response) -> dict:
    """The ``error`` object of an API error response, checking the one shape on the way."""
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "fields"}, body
    assert body["error"]["message"]
    return body["error"]


def body_text(response) -> str:
    return response.content.decode("utf-8", "replace")
