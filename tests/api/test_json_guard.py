"""Every JSON endpoint goes through the one guard: deep nesting, non-finite numbers and lone surrogates are
a 400 naming the field, never a 500 (issue 12)."""

from __future__ import annotations

import pytest

from memoryboard.models import ChatMessage, LongTermMemory
from tests.api.helpers import error_of

DEEP = b"[" * 1200 + b"]" * 1200


def endpoints(memory_id: str) -> list[tuple[str, str]]:
    return [
        ("POST", "/api/v1/strategies/context/trim/apply"),
        ("POST", "/api/v1/strategies/memory/trim/plan"),
        ("POST", "/api/v1/strategies/memory/trim/apply"),
        ("POST", "/api/v1/agents/chat/chat"),
        ("PATCH", f"/api/v1/memories/{memory_id}/"),
    ]


def send(client, method: str, url: str, body: bytes):
    return client.generic(method, url, body, content_type="application/json")


@pytest.mark.django_db
def test_deep_nesting_is_400_on_every_json_endpoint_the_anonymous_token_one_included(as_user, superuser, make_memory):
    memory = make_memory(superuser, "x")
    anonymous = send(as_user(None), "POST", "/api/v1/auth/token/", DEEP)
    assert anonymous.status_code == 400, anonymous.content
    assert list(error_of(anonymous)["fields"]) == ["[0]" * 64]
    client = as_user(superuser)
    for method, url in endpoints(memory.pk):
        response = send(client, method, url, b'{"messages": ' + DEEP + b"}")
        assert response.status_code == 400, (url, response.content[:200])
        error = error_of(response)
        assert error["code"] == "parse_error"
        assert list(error["fields"]) == ["messages" + "[0]" * 63]


@pytest.mark.parametrize("number", [b"Infinity", b"-Infinity", b"NaN", b"1e400"])
@pytest.mark.django_db
def test_numbers_that_are_not_finite_are_400_naming_the_param(as_user, alice, number):
    body = b'{"messages": [{"role": "user", "content": "hi"}], "params": {"keep_first": ' + number + b"}}"
    response = send(as_user(alice), "POST", "/api/v1/strategies/context/trim/apply", body)
    assert response.status_code == 400
    assert list(error_of(response)["fields"]) == ["params.keep_first"]


@pytest.mark.django_db
def test_a_lone_surrogate_in_content_is_400_naming_the_message(as_user, alice, make_memory):
    client = as_user(alice)
    body = b'{"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": "bad \\ud800"}]}'
    response = send(client, "POST", "/api/v1/strategies/context/trim/apply", body)
    assert response.status_code == 400
    assert list(error_of(response)["fields"]) == ["messages[1].content"]
    chat = send(client, "POST", "/api/v1/agents/chat/chat", b'{"message": "hi \\udfff"}')
    assert chat.status_code == 400 and list(error_of(chat)["fields"]) == ["message"]
    assert not ChatMessage.objects.exists()
    memory = make_memory(alice, "before")
    patch = send(client, "PATCH", f"/api/v1/memories/{memory.pk}/", b'{"content": "\\ud800"}')
    assert patch.status_code == 400 and list(error_of(patch)["fields"]) == ["content"]
    assert LongTermMemory.objects.get(pk=memory.pk).content == "before"


@pytest.mark.parametrize("body,field", [
    (b'{"message": 5}', "message"),
    (b'{"message": ["hi"]}', "message"),
    (b'{"message": "hi", "conversation_id": 7}', "conversation_id"),
])
@pytest.mark.django_db
def test_chat_takes_strings_only(as_user, alice, body, field):
    response = send(as_user(alice), "POST", "/api/v1/agents/chat/chat", body)
    assert response.status_code == 400
    assert field in error_of(response)["fields"]
    assert not ChatMessage.objects.exists()
