"""Limits shared by every process, on the database cache (SQLite and MariaDB): sign-in throttling
keyed on the peer address (X-Forwarded-For only behind configured proxies), and each user's slots
on the strategy endpoints. tests/security/test_limits_live.py runs them against gunicorn workers."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from memoryboard.api.throttling import shared_cache, strategy_request_slot

TOKEN = "/api/v1/auth/token/"
APPLY = "/api/v1/strategies/context/trim/apply"
BODY = {"messages": [{"role": "user", "content": "hello"}], "params": {"keep_first": 1, "keep_last": 1}}

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def database_cache(settings):
    """The shared cache as deployed: Django's database cache in the table migrate created."""
    settings.CACHES = {**settings.CACHES, "shared": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "memoryboard_cache"}}
    shared_cache().clear()
    yield
    shared_cache().clear()


def test_the_shared_cache_is_the_migrated_database_table():
    from django.db import connection

    assert "memoryboard_cache" in connection.introspection.table_names()
    shared_cache().set("probe", 1, 30)
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM memoryboard_cache")
        assert cursor.fetchone()[0] == 1


def test_token_rate_is_per_peer_whatever_x_forwarded_for_says(alice):
    api = APIClient()
    statuses = [api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json",
                         HTTP_X_FORWARDED_FOR=f"203.0.113.{n}").status_code for n in range(12)]
    assert statuses == [200] * 10 + [429] * 2


def test_failed_sign_ins_are_per_peer_whatever_x_forwarded_for_says(alice, client):
    for n in range(10):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"},
                           HTTP_X_FORWARDED_FOR="192.0.2.77")
    assert response.status_code == 200 and "_auth_user_id" not in client.session  # still refused


def test_behind_a_configured_proxy_the_address_it_saw_is_used(alice, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    api = APIClient()
    # The proxy appends the address it saw; what the client put before it is ignored.
    first = [api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json",
                      HTTP_X_FORWARDED_FOR=f"forged-{n}, 198.51.100.1").status_code for n in range(11)]
    other = api.post(TOKEN, {"username": "alice", "password": "pw-alice"}, format="json",
                     HTTP_X_FORWARDED_FOR="198.51.100.2")
    assert first == [200] * 10 + [429] and other.status_code == 200


def _api(user):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.get_or_create(user=user)[0].key)
    return api


def test_a_user_running_their_share_of_strategy_requests_gets_429_others_do_not(settings, alice, bob):
    settings.MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER = 2
    with strategy_request_slot(user_key=str(alice.pk), body_bytes=100), \
            strategy_request_slot(user_key=str(alice.pk), body_bytes=100):
        refused = _api(alice).post(APPLY, BODY, format="json")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "throttled" and "2 strategy requests" in refused.json()["error"]["message"]
        assert refused["Retry-After"]
        assert _api(bob).post(APPLY, BODY, format="json").status_code == 200
    assert _api(alice).post(APPLY, BODY, format="json").status_code == 200  # slots are given back


def test_a_user_over_the_byte_budget_gets_429_before_the_body_is_read(settings, alice):
    settings.MEMORYBOARD_STRATEGY_BYTES_PER_USER = 60 * 1024 * 1024
    with strategy_request_slot(user_key=str(alice.pk), body_bytes=59 * 1024 * 1024):
        refused = _api(alice).post(APPLY, BODY, format="json", CONTENT_LENGTH=str(2 * 1024 * 1024))
        assert refused.status_code == 429 and "bytes" in refused.json()["error"]["message"]
        assert _api(alice).post(APPLY, BODY, format="json").status_code == 200  # a small one still fits


def test_every_strategy_endpoint_takes_a_slot(settings, superuser):
    settings.MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER = 1
    replay = {"messages": [{"role": "user", "content": "hi"}], "strategies": [{"name": "trim"}]}
    assert _api(superuser).post("/api/v1/strategies/replay", replay, format="json").status_code == 200
    with strategy_request_slot(user_key=str(superuser.pk), body_bytes=10):
        for path in ("/api/v1/strategies/memory/sliding_window/plan", "/api/v1/strategies/memory/sliding_window/apply"):
            assert _api(superuser).post(path, {"conversation_id": "c1"}, format="json").status_code == 429
        assert _api(superuser).post("/api/v1/strategies/replay", replay, format="json").status_code == 429


def test_a_slot_of_a_failed_request_is_given_back(settings, alice):
    settings.MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER = 1
    for _ in range(3):
        assert _api(alice).post(APPLY, {"messages": "not a list"}, format="json").status_code == 400
    assert _api(alice).post(APPLY, BODY, format="json").status_code == 200
