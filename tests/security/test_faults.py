"""Faults: a dropped database connection, a memory strategy failing half-way, a failing LLM."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection

from memoryboard.models import AuditLog, ChatMessage
from tests.api.helpers import error_of
from tests.conftest import is_mysql


@pytest.mark.django_db(transaction=True)
def test_dropped_database_connection_is_recovered(as_user, alice, make_memory):
    if not is_mysql():
        pytest.skip("killing the connection needs MariaDB/MySQL (SQLite has no server connection)")
    import MySQLdb

    make_memory(alice, "still here")
    client = as_user(alice)
    old_max_age = connection.settings_dict["CONN_MAX_AGE"]
    old_checks = connection.settings_dict["CONN_HEALTH_CHECKS"]
    connection.settings_dict["CONN_MAX_AGE"] = 60
    connection.settings_dict["CONN_HEALTH_CHECKS"] = True
    try:
        assert client.get("/api/v1/memories/").status_code == 200
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
        response = client.get("/api/v1/memories/")
        assert response.status_code == 200, response.content
        assert [item["content"] for item in response.json()["results"]] == ["still here"]
        with connection.cursor() as cursor:
            cursor.execute("SELECT CONNECTION_ID()")
            assert cursor.fetchone()[0] != connection_id
    finally:
        connection.settings_dict["CONN_MAX_AGE"] = old_max_age
        connection.settings_dict["CONN_HEALTH_CHECKS"] = old_checks


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
