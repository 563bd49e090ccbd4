"""Bad input gets a 4xx with the one JSON error shape and a message; never a 500."""

from __future__ import annotations

import json

import pytest

from memoryboard.ltm.store.items import MAX_CONTENT_CHARS
from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db

CONTEXT = "/api/v1/strategies/context/trim/apply"


def post_raw(client, url, data: bytes, content_type="application/json"):
    return client.generic("POST", url, data, content_type=content_type)


def test_malformed_json(as_user, alice):
    response = post_raw(as_user(alice), CONTEXT, b'{"messages": [')
    assert response.status_code == 400
    assert error_of(response)["code"] == "parse_error"


def test_body_that_is_not_an_object(as_user, alice):
    response = post_raw(as_user(alice), CONTEXT, b"[1, 2, 3]")
    assert response.status_code == 400
    error_of(response)


def test_wrong_types(as_user, alice):
    response = as_user(alice).post(CONTEXT, {"messages": [{"role": 3, "content": None}]}, format="json")
    assert response.status_code == 400
    assert "messages[0].role" in error_of(response)["fields"]


@pytest.mark.parametrize("value", [-1, 10**40, 2.5, True, None, "3"])
def test_negative_huge_and_non_integer_counts(as_user, alice, value):
    response = as_user(alice).post(CONTEXT, {"messages": [], "params": {"keep_last": value}}, format="json")
    assert response.status_code == 400
    assert "params.keep_last" in error_of(response)["fields"]


def test_unknown_strategy(as_user, alice):
    response = as_user(alice).post("/api/v1/strategies/context/forget_all/apply", {"messages": []}, format="json")
    assert response.status_code == 400
    assert "forget_all" in error_of(response)["message"]


def test_message_without_role(as_user, alice):
    response = as_user(alice).post(
        CONTEXT, {"messages": [{"role": "user", "content": "a"}, {"content": "b"}]}, format="json"
    )
    assert response.status_code == 400
    assert "messages[1].role" in error_of(response)["fields"]


def test_ten_megabyte_body_is_413_json(as_user, alice, settings):
    settings.MEMORYBOARD_STRATEGY_MAX_BODY_BYTES = 8 * 1024 * 1024
    body = json.dumps({"messages": [{"role": "user", "content": "x" * (10 * 1024 * 1024)}]}).encode()
    response = post_raw(as_user(alice), CONTEXT, body)
    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "request_too_large"
    assert str(settings.MEMORYBOARD_STRATEGY_MAX_BODY_BYTES) in error["message"]


def test_413_also_when_the_limit_is_lowered(as_user, alice, settings):
    settings.MEMORYBOARD_STRATEGY_MAX_BODY_BYTES = 1000
    response = as_user(alice).post(CONTEXT, {"messages": [{"role": "user", "content": "y" * 2000}]}, format="json")
    assert response.status_code == 413


def test_strategy_endpoints_have_their_own_larger_limit(as_user, alice, settings):
    """A 10k-message trace is above the default body limit: the strategy endpoints take it, others do not."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    messages = [{"role": "user" if i % 2 else "assistant", "content": "z" * 40} for i in range(10_000)]
    body = json.dumps({"messages": messages, "params": {"keep_first": 1, "keep_last": 1}}).encode()
    assert len(body) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = post_raw(as_user(alice), CONTEXT, body)
    assert response.status_code == 200, response.content[:300]
    assert response.json()["kept"] == [0, 9999]
    other = as_user(alice).generic("PATCH", "/api/v1/memories/x/", body, content_type="application/json")
    assert other.status_code == 413


def test_invalid_utf8(as_user, alice):
    response = post_raw(as_user(alice), CONTEXT, b'{"messages": [{"role": "user", "content": "\xff\xfe"}]}')
    assert response.status_code == 400
    assert error_of(response)["code"] == "parse_error"
    assert list(error_of(response)["fields"]) == ["body"]
    assert "UTF-8" in error_of(response)["fields"]["body"][0]


def test_invalid_utf8_in_query_string(as_user, alice):
    response = as_user(alice).get("/api/v1/memories/search/", QUERY_STRING="q=%ff%fe%fd")
    assert response.status_code in (200, 400)


def test_very_long_unicode_memory_content_is_400(as_user, alice, make_memory):
    memory = make_memory(alice, "short")
    response = as_user(alice).patch(
        f"/api/v1/memories/{memory.pk}/", {"content": "记" * (MAX_CONTENT_CHARS + 1)}, format="json"
    )
    assert response.status_code == 400
    assert "content" in error_of(response)["fields"]
    memory.refresh_from_db()
    assert memory.content == "short"


def test_long_unicode_content_at_the_limit_is_stored(as_user, alice, make_memory):
    memory = make_memory(alice, "short")
    content = "记🧠" * (MAX_CONTENT_CHARS // 2)
    response = as_user(alice).patch(f"/api/v1/memories/{memory.pk}/", {"content": content}, format="json")
    assert response.status_code == 200, response.content
    memory.refresh_from_db()
    assert memory.content == content


def test_strategies_accept_long_unicode_content(as_user, alice):
    messages = [{"role": "user", "content": "长🧠" * 200_000}, {"role": "assistant", "content": "ok"}]
    response = as_user(alice).post(CONTEXT, {"messages": messages, "params": {"keep_first": 1, "keep_last": 1}}, format="json")
    assert response.status_code == 200
    assert response.json()["messages"][0]["content"] == messages[0]["content"]


@pytest.mark.parametrize("url", ["/api/v1/nothing-here/", "/api/v1/memories/nope/archive/x/", "/api/v1/strategies/context/"])
def test_unknown_urls_are_404_json(as_user, alice, url):
    response = as_user(alice).get(url)
    assert response.status_code == 404
    error_of(response)


def test_unknown_memory_is_404_json(as_user, alice):
    response = as_user(alice).get("/api/v1/memories/does-not-exist/")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_wrong_method_is_405_json(as_user, alice):
    response = as_user(alice).get(CONTEXT)
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


def test_unsupported_media_type(as_user, alice):
    response = post_raw(as_user(alice), CONTEXT, b"messages=1", content_type="text/plain")
    assert response.status_code == 415
    error_of(response)
