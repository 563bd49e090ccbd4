from __future__ import annotations

import pytest

from tests.agent.conftest import agents_yaml  # noqa: F401  (chat: memory + tools, quiet, plain)


def tool_json(result) -> dict:
    """The structured result of a tool call (the error text for a failed call)."""
    if result.is_error:
        return {"error": " ".join(getattr(part, "text", "") for part in result.content)}
    return result.structured_content


@pytest.fixture
def token_of(db):
    def make(user) -> str:
        from rest_framework.authtoken.models import Token

        return Token.objects.get_or_create(user=user)[0].key

    return make
