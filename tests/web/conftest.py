"""Fixtures of the web page tests: English UI, fast password hashing, a stored conversation."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _english(settings):
    """Assertions read English UI text, whatever the default language and compiled translations."""
    settings.LANGUAGE_CODE = "en"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast user fixtures


@pytest.fixture
def make_conversation(db):
    """make_conversation(user, n=12, conversation_id="c1"): n stored messages alternating user/assistant."""
    from memoryboard.models import ChatMessage

    def make(user, n: int = 12, *, conversation_id: str = "c1", agent: str = "chat", contents=None):
        rows = []
        for i in range(n):
            role = "SYSTEM" if i == 0 else ("USER" if i % 2 else "ASSISTANT")
            content = contents[i] if contents else f"message {i} " + "lorem ipsum " * (i % 5 + 1)
            rows.append(ChatMessage.objects.create(
                conversation_id=conversation_id, agent_id=agent, user_id=str(user.pk), role=role, content=content
            ))
        return rows

    return make
