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


def _token_for(user) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.get_or_create(user=user)[0].key


@pytest.mark.parametrize(
    ("who", "sees_others"), [("alice", False), ("support_user", True), ("developer", True), ("superuser", True)]
)
def test_token_auth_reads_roles_with_the_token(request, api, who, sees_others, alice, bob, make_memory):
    """Role groups come from the token query itself; a role still decides what the caller sees."""
    make_memory(alice, "alice's item")
    make_memory(bob, "bob's item")
    user = request.getfixturevalue(who)
    api.credentials(HTTP_AUTHORIZATION=f"Token {_token_for(user)}")
    contents = {item["content"] for item in api.get("/api/v1/memories/").json()["results"]}
    assert ("bob's item" in contents) is sees_others
    assert ("alice's item" in contents) is (sees_others or who == "alice")


def test_token_of_an_inactive_user_is_401(api, alice):
    key = _token_for(alice)
    alice.is_active = False
    alice.save()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = api.get("/api/v1/memories/")
    assert response.status_code == 401
    assert "inactive" in error_of(response)["message"].lower()


def test_end_user_search_by_token_is_six_queries(api, alice, make_memory, django_assert_num_queries):
    """The load path: token + roles, the user's pause rules, the candidates' ids and versions (the
    scope's vectors and keyword index are then cached), the ids of the paused ones (apart: an EXISTS on
    every candidate cost MariaDB ~0.25 s per 100,000), the top items, and whether the scope holds
    superseded items (whose successors a matching one would bring in)."""
    for i in range(30):
        make_memory(alice, f"User note {i} about Java")
    api.credentials(HTTP_AUTHORIZATION=f"Token {_token_for(alice)}")
    assert api.get("/api/v1/memories/search/", {"q": "Java"}).status_code == 200  # vectors now cached
    with django_assert_num_queries(6):
        response = api.get("/api/v1/memories/search/", {"q": "Java", "k": 5})
    assert response.status_code == 200
    assert len(response.json()) == 5


def test_ping_is_drf_token_authentication_only(api, alice):
    assert api.get("/api/v1/ping/").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {_token_for(alice)}")
    assert api.get("/api/v1/ping/").json() == {"pong": True}
