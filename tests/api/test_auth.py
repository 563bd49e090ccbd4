"""Session and token authentication; the token endpoint is throttled."""

from __future__ import annotations

import pytest

from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db

TOKEN = "/api/v1/auth/token/"


def test_token_for_valid_credentials_then_token_auth(api, alice, make_memory):
    make_memory(alice, "token visible")
    response = api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]
    again = api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json").json()["token"]
    assert again == token
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    body = api.get("/api/v1/memories/").json()
    assert [item["content"] for item in body["results"]] == ["token visible"]


def test_wrong_password_is_400_without_detail_on_which_part(api, alice):
    response = api.post(TOKEN, {"username": "alice", "password": "nope"}, format="json")
    assert response.status_code == 400
    assert "non_field_errors" in error_of(response)["fields"]
    assert "token" not in response.json()


def test_missing_fields_named(api):
    response = api.post(TOKEN, {"username": "alice"}, format="json")
    assert response.status_code == 400
    assert "password" in error_of(response)["fields"]


def test_bad_token_is_401(api):
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = api.get("/api/v1/memories/")
    assert response.status_code == 401
    error_of(response)


def test_anonymous_is_401_with_challenge(api):
    response = api.get("/api/v1/memories/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")


def test_token_endpoint_throttled_after_failures_even_with_right_password(api, alice, settings):
    for _ in range(10):
        assert api.post(TOKEN, {"username": "alice", "password": "guess"}, format="json").status_code in (400, 429)
    response = api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json")
    assert response.status_code == 429
    assert error_of(response)["code"] == "throttled"


def test_failures_are_per_user_name(api, alice, bob):
    from memoryboard.api.throttling import LOGIN_FAILURE_LIMIT, login_record_failure

    class Request:
        META = {"REMOTE_ADDR": "127.0.0.1"}

    for _ in range(LOGIN_FAILURE_LIMIT):
        login_record_failure(Request(), "alice")
    assert api.post(TOKEN, {"username": "bob", "password": "pw-bob"}, format="json").status_code == 200
    assert api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json").status_code == 429


def test_token_endpoint_rate_limited(api, alice):
    statuses = [api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json").status_code
                for _ in range(11)]
    assert statuses[:10] == [200] * 10 and statuses[10] == 429


def test_session_auth(client, alice, make_memory):
    make_memory(alice, "session visible")
    client.force_login(alice)
    assert client.get("/api/v1/memories/").status_code == 200
