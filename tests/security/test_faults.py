"""Faults: a dropped database connection, a memory strategy failing half-way, a failing LLM."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection

from memoryboard.models import AuditLog, ChatMessage
from tests.api.helpers import error_of
from tests.conftest import is_mysql


def _wsgi_get(path: str, token: str) -> tuple[str, bytes]:
    """A request through Django's production WSGI handler.

    The test client disconnects ``close_old_connections`` from ``request_started``; the real handler
    keeps it, and that is where the connection's health check is re-armed for each request.
    """
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import RequestFactory

    environ = RequestFactory()._base_environ(PATH_INFO=path, REQUEST_METHOD="GET", HTTP_AUTHORIZATION=f"Token {token}")
    status: list[str] = []
    body = b"".join(WSGIHandler()(environ, lambda s, headers, exc_info=None: status.append(s)))
    return status[0], body


@pytest.mark.django_db(transaction=True)
def test_dropped_database_connection_is_recovered(alice, make_memory):
    if not is_mysql():
        pytest.skip("killing the connection needs MariaDB/MySQL (SQLite has no server connection)")
    import MySQLdb
    from rest_framework.authtoken.models import Token

    make_memory(alice, "still here")
    token = Token.objects.create(user=alice).key
    old = {key: connection.settings_dict[key] for key in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS")}
    connection.settings_dict.update(CONN_MAX_AGE=60, CONN_HEALTH_CHECKS=True)
    try:
        status, _ = _wsgi_get("/api/v1/memories/", token)
        assert status.startswith("200")
        with connection.cursor() as cursor:
            cursor.execute("SELECT CONNECTION_ID()")
            (connection_id,) = cursor.fetchone()
        params = connection.get_connection_params()
        killer = MySQLdb.connect(
            host=params.get("host", "127.0.0.1"), port=params.get("port", 3306), user=params.get("user", "root"),
            password=params.get("password", ""),
        )
        try:
            killer.cursor().execute(f"KILL {int(connection_id)}")
        finally:
            killer.close()
        status, body = _wsgi_get("/api/v1/memories/", token)
        assert status.startswith("200"), body
        assert b"still here" in body
        with connection.cursor() as cursor:
            cursor.execute("SELECT CONNECTION_ID()")
            assert cursor.fetchone()[0] != connection_id
    finally:
        connection.settings_dict.update(old)


@pytest.mark.django_db(transaction=True)
def test_memory_strategy_failing_half_way_leaves_the_table_unchanged(as_user, superuser, alice, make_conversation,
                                                                      monkeypatch):
    conversation = make_conversation(alice, 12)
    before = sorted(ChatMessage.objects.values_list("id", "role", "content", "created_at"))

    def fail(*args, **kwargs):
        raise OperationalError("connection lost after the delete")

    # SUMMARIZE deletes the old rows, then inserts the summary: the insert fails after the delete ran.
    monkeypatch.setattr(ChatMessage.objects, "create", fail)
    response = as_user(superuser).post(
        "/api/v1/strategies/memory/summarize/apply",
        {"conversation_id": conversation, "params": {"threshold": 4, "keep_last": 2}},
        format="json",
    )
    assert response.status_code == 503
    assert "nothing was changed" in error_of(response)["message"]
    assert sorted(ChatMessage.objects.values_list("id", "role", "content", "created_at")) == before
    assert not AuditLog.objects.filter(action=AuditLog.Action.APPLY_STRATEGY).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("fault", ["timeout", "http500", "malformed"])
def test_llm_failure_in_memory_summarize_deletes_nothing(as_user, superuser, alice, make_conversation,
                                                          openai_settings, fault):
    conversation = make_conversation(alice, 12)
    openai_settings.set_fault(fault)
    response = as_user(superuser).post(
        "/api/v1/strategies/memory/summarize/apply",
        {"conversation_id": conversation, "params": {"threshold": 4, "keep_last": 2}},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["fallback"] and body["delete_ids"] == []
    assert ChatMessage.objects.count() == 12
