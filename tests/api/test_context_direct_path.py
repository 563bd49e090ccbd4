"""The context endpoint's direct path (``api.strategy_requests``): a JSON body signed with a token is
answered without DRF's request handling, with the same authentication, body limits, throttle and error
shapes as the DRF view, which still answers every other request."""

from __future__ import annotations

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from rest_framework.views import APIView

from memoryboard.api.throttling import strategy_request_slot
from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db

URL = "/api/v1/strategies/context/sliding_window/apply"
TRACE = [
    {"role": "system", "content": "You are an agent."},
    {"role": "user", "content": "find the notes"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"notes\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "three notes", "x-extra": {"kept": [1, 2]}},
    {"role": "assistant", "content": "Here they are."},
]
BODY = {"messages": TRACE, "params": {"max_tokens": 30}}
DEEP = ('{"messages": [{"role": "user", "content": "x", "deep": ' + "[" * 80 + "]" * 80 + "}]}").encode()


def _token_client(user, keyword: str = "Token") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{keyword} " + Token.objects.get_or_create(user=user)[0].key)
    return client


def _post(client, body, **extra):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.generic("POST", URL, raw, content_type="application/json", **extra)


@pytest.fixture
def without_drf(monkeypatch):
    """DRF's request handling made to fail: what still answers came by the direct path."""

    def refuse(self, request, *args, **kwargs):
        raise AssertionError("DRF's dispatch was used")

    return lambda: monkeypatch.setattr(APIView, "dispatch", refuse)


def _through_drf(user, body, url=URL):
    """The same request with an ``Accept`` the direct path leaves to DRF (which answers it with JSON)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return _token_client(user).generic("POST", url, raw, content_type="application/json",
                                       HTTP_ACCEPT="application/json, */*;q=0.1")


def _same_answer(direct, drf) -> None:
    assert direct.status_code == drf.status_code
    assert direct.json() == drf.json()
    for header in ("Content-Type", "Allow", "Vary", "Retry-After", "WWW-Authenticate"):
        assert direct.get(header) == drf.get(header), header


def test_a_token_and_a_json_body_take_the_direct_path_with_the_drf_views_answer(alice, without_drf):
    drf = _through_drf(alice, BODY)
    assert drf.status_code == 200, drf.content
    without_drf()
    direct = _post(_token_client(alice), BODY)
    _same_answer(direct, drf)
    assert direct.json()["messages"][-2]["x-extra"] == {"kept": [1, 2]}  # as it came


@pytest.mark.parametrize("max_tokens", [1, 30, 10_000])
def test_the_direct_paths_answer_is_the_drf_views_bytes(alice, without_drf, max_tokens):
    """Rendered while the cycle collector is paused (and the result freed before it resumes): the same bytes
    as DRF's view renders, whatever the window keeps (nothing, a few messages, all of them)."""
    body = {"messages": TRACE * 40, "params": {"max_tokens": max_tokens}}
    drf = _through_drf(alice, body)
    assert drf.status_code == 200, drf.content
    without_drf()
    direct = _post(_token_client(alice), body)
    assert direct.status_code == 200
    assert direct.content == drf.content
    kept = len(direct.json()["messages"])
    assert kept == 0 if max_tokens == 1 else kept == 200 if max_tokens == 10_000 else 0 < kept < 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"messages": [', "body"),
        (b'{"messages": [{"role": "user", "content": "a", "n": 1e400}]}', "messages[0].n"),
        (DEEP, "messages[0].deep"),
        ({"messages": "hello"}, "messages"),
        ({"messages": TRACE, "params": {"max_tokens": "many"}}, "params.max_tokens"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"messages": TRACE, "colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_the_same_400_naming_the_field(alice, without_drf, body, field):
    drf = _through_drf(alice, body)
    without_drf()
    direct = _post(_token_client(alice), body)
    _same_answer(direct, drf)
    assert direct.status_code == 400
    assert any(key == field or key.startswith(field) for key in error_of(direct)["fields"]), error_of(direct)


def test_an_unknown_strategy_is_the_same_400(alice, without_drf):
    url = URL.replace("sliding_window", "magic")
    drf = _through_drf(alice, BODY, url)
    without_drf()
    direct = _token_client(alice).generic("POST", url, json.dumps(BODY), content_type="application/json")
    _same_answer(direct, drf)
    assert "name" in error_of(direct)["fields"]


def test_the_body_limits_are_the_same_413(alice, settings, without_drf):
    settings.MEMORYBOARD_STRATEGY_MAX_BODY_BYTES = 1000
    big = {"messages": [{"role": "user", "content": "y" * 2000}]}
    drf = _through_drf(alice, big)
    without_drf()
    direct = _post(_token_client(alice), big)
    _same_answer(direct, drf)
    assert direct.status_code == 413 and error_of(direct)["code"] == "request_too_large"
    assert "1000" in error_of(direct)["message"]


def test_the_strategy_slot_throttles_the_direct_path_and_is_given_back(alice, bob, settings, without_drf):
    settings.MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER = 1
    with strategy_request_slot(user_key=str(alice.pk), body_bytes=10):
        drf = _through_drf(alice, BODY)
        without_drf()
        direct = _post(_token_client(alice), BODY)
        _same_answer(direct, drf)
        assert direct.status_code == 429 and direct["Retry-After"] and error_of(direct)["code"] == "throttled"
        assert _post(_token_client(bob), BODY).status_code == 200  # another user is not held back
    assert _post(_token_client(alice), {"messages": "bad"}).status_code == 400
    assert _post(_token_client(alice), BODY).status_code == 200  # the failed request gave its slot back


def test_the_byte_budget_throttles_before_the_body_is_read(alice, settings, without_drf):
    settings.MEMORYBOARD_STRATEGY_BYTES_PER_USER = 1000
    without_drf()
    with strategy_request_slot(user_key=str(alice.pk), body_bytes=900):
        refused = _post(_token_client(alice), BODY)
    assert refused.status_code == 429 and "bytes" in error_of(refused)["message"]


@pytest.mark.parametrize("credentials", ["Token not-a-token", "Token ", "Bearer {key}", ""])
def test_refused_credentials_are_the_same_401(api, alice, credentials):
    key = Token.objects.get_or_create(user=alice)[0].key
    if credentials:
        api.credentials(HTTP_AUTHORIZATION=credentials.format(key=key))
    response = _post(api, BODY)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert error_of(response)["code"] in ("not_authenticated", "authentication_failed")


def test_an_inactive_users_token_is_401(alice):
    client = _token_client(alice)
    alice.is_active = False
    alice.save()
    response = _post(client, BODY)
    assert response.status_code == 401 and error_of(response)["code"] == "authentication_failed"


def test_a_session_without_its_csrf_token_is_403(alice):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(alice)
    response = _post(client, BODY)
    assert response.status_code == 403 and "CSRF" in error_of(response)["message"]


def test_other_requests_are_the_drf_views(alice):
    client = _token_client(alice)
    assert client.generic("POST", URL, json.dumps(BODY), content_type="text/plain").status_code == 415
    assert client.get(URL).status_code == 405
    indented = client.generic("POST", URL, json.dumps(BODY), content_type="application/json",
                              HTTP_ACCEPT="application/json; indent=2")
    assert indented.status_code == 200 and b"\n  " in indented.content
