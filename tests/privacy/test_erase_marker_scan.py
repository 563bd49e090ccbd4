"""The marker scan: one unique marker planted through every write path, then the erase, then a full dump.

Write paths: an agent turn on the API (the user's message, the model's reply, a ``memory_save`` tool call,
the extraction that follows, the retrieval receipt), ``/v1/chat/completions``, ``POST /api/v1/memories/
import``, ``PATCH /api/v1/memories/{id}/``, MCP ``memory_save``, an edit on "My memories", a support edit
in the admin (its history, "Recent actions"), and a playground trace a developer pasted from the user's
conversation. Before the erase the marker is in each of those tables (the scan can fail); after it, no
row of any table (read with the database's own introspection, every column) and no log record at the
level an operator may set (INFO) holds it. Run on SQLite and MariaDB.
"""

from __future__ import annotations

import json
import logging

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from memoryboard.ltm.people.user_data import user_data_erase
from memoryboard.models import AuditLog, ChatMessage, LongTermMemory

pytestmark = pytest.mark.django_db

MARK = "ZQX7731MARK"


def tables_holding(marker: str) -> dict[str, int]:
    """Per table, how many rows hold ``marker`` in any column (text, JSON or bytes)."""
    found: dict[str, int] = {}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {quote(table)}")  # noqa: S608 - names from introspection
            for row in cursor.fetchall():
                for value in row:
                    text = bytes(value).decode("utf-8", "replace") if isinstance(value, (bytes, memoryview)) \
                        else str(value)
                    if marker in text:
                        found[table] = found.get(table, 0) + 1
                        break
    return found


def _item(text: str) -> LongTermMemory:
    return next(m for m in LongTermMemory.objects.all() if text in m.content)


def _api(user, token: str | None = None) -> APIClient:
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    else:
        client.force_authenticate(user)
    return client


def _plant(*, alice, superuser, developer, client, fake) -> None:
    uid = str(alice.pk)
    token = Token.objects.create(user=alice).key
    api = _api(alice)

    # An agent turn: the model saves an item with its tool, then answers; the extraction that follows
    # (inline in the tests) saves what the user said.
    fake.push_reply(tool_calls=[{"name": "memory_save", "arguments": {"content": f"User's call sign is {MARK}-tool"}}])
    fake.push_reply(content=f"Noted, {MARK}-reply.")
    fake.push_reply(content=json.dumps([{"type": "FACT", "content": f"User is a pilot {MARK}-extract"}]))
    turn = api.post("/api/v1/agents/chat/chat", {"message": f"I am a pilot, my call sign is {MARK}-chat",
                                                "conversation_id": "conv-mark"}, format="json")
    assert turn.status_code == 200, turn.content

    # /v1/chat/completions with the user's token.
    fake.push_reply(content=f"Nice dog, {MARK}-v1reply.")
    fake.push_reply(content=json.dumps([{"type": "FACT", "content": f"User has a dog {MARK}-v1extract"}]))
    v1 = _api(alice, token).post("/v1/chat/completions", {
        "model": "chat", "messages": [{"role": "user", "content": f"My dog is called {MARK}-v1"}]}, format="json")
    assert v1.status_code == 200, v1.content

    imported = api.post("/api/v1/memories/import", {"items": [{"content": f"User imported {MARK}-import"}],
                                                     "dry_run": False}, format="json")
    assert imported.status_code == 200, imported.content

    from memoryboard.mcp_server.tools import identity_for_token, mcp_memory_save

    mcp_memory_save(identity=identity_for_token(key=token), content=f"User saved over MCP {MARK}-mcp")

    item = _item(f"{MARK}-import")
    patched = api.patch(f"/api/v1/memories/{item.pk}/", {"content": f"User patched {MARK}-patch"}, format="json")
    assert patched.status_code == 200, patched.content

    client.force_login(alice)
    mcp_item = _item(f"{MARK}-mcp")
    edited = client.post(reverse("my-memories-edit", args=[mcp_item.pk]), {"content": f"User edited {MARK}-edit"})
    assert edited.status_code in (200, 302), edited.status_code

    client.force_login(superuser)
    tool_item = _item(f"{MARK}-tool")
    admin_edit = client.post(reverse("admin:memoryboard_longtermmemory_change", args=[tool_item.pk]),
                             {"content": f"User's call sign (checked) {MARK}-admin", "memory_type": "FACT"})
    assert admin_edit.status_code == 302, admin_edit.content.decode()[:500]

    # Support archives an item with a reason that quotes the user.
    support = _api(superuser)
    archived = support.post(f"/api/v1/memories/{_item(f'{MARK}-extract').pk}/archive/",
                            {"reason": f"User asked: forget {MARK}-reason"}, format="json")
    assert archived.status_code == 200, archived.content

    client.force_login(developer)
    pasted = [{"role": m.role.lower(), "content": m.content}
              for m in ChatMessage.objects.filter(user_id=uid, conversation_id="conv-mark").order_by("id")
              if m.role in ("USER", "ASSISTANT") and m.content]
    trace = client.post(reverse("playground"), {"messages_json": json.dumps(pasted)})
    assert trace.status_code == 302, trace.content.decode()[:500]


def test_a_marker_planted_through_every_write_path_is_found_nowhere_after_the_erase(
    openai_settings, settings, client, alice, bob, superuser, developer, make_memory, caplog,
):
    caplog.set_level(logging.INFO)
    make_memory(bob, f"Bob's own note, not {MARK[:4]}")
    _plant(alice=alice, superuser=superuser, developer=developer, client=client, fake=openai_settings)

    before = tables_holding(MARK)
    for table in ("ah_long_term_memory", "chat_message", "memoryboard_audit_log", "memoryboard_retrieval_receipt",
                  "memoryboard_playground_trace"):
        assert before.get(table), (table, before)
    assert AuditLog.objects.filter(reason__contains=f"{MARK}-reason").exists()
    saved = {m.content.rsplit(MARK, 1)[-1] for m in LongTermMemory.objects.all() if MARK in m.content}
    assert {"-extract", "-v1extract", "-patch", "-edit", "-admin"} <= saved, saved
    from django.contrib.admin.models import LogEntry

    assert LogEntry.objects.filter(object_id=_item(f"{MARK}-admin").pk).exists()
    assert "django_admin_log" not in before  # the admin's history names the item by id, never by its text

    user_data_erase(user_id=str(alice.pk), actor=alice)

    assert tables_holding(MARK) == {}
    assert MARK not in caplog.text
    assert _item("Bob's own note")
