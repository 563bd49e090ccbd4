"""The marker scan: one unique marker planted through every write path, then the erase, then a full dump.

Write paths: an agent turn on the API (the user's message, the model's reply, a ``memory_save`` tool call,
the extraction that follows, the retrieval receipt), ``/v1/chat/completions``, ``POST /api/v1/memories/
import``, ``PATCH /api/v1/memories/{id}/``, MCP ``memory_save``, an edit on "My memories", a support edit
in the admin (its history, "Recent actions"), a memory strategy support applied to the user's conversation,
and a playground trace a developer pasted from the user's conversation. The marker is in every field a
client chooses too: the conversation ids, the agent (its id, as ``/v1``'s ``model``, and an import row's
``agent``), a client tool's name and an import file's name. Before the erase the marker is in each of those
tables (the scan can fail); after it, no row of any table (read with the database's own introspection,
every column) and no log record at the level an operator may set (INFO) holds it. Run on SQLite and MariaDB.
"""

from __future__ import annotations

import json
import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from memoryboard.ltm.people.user_data import user_data_erase
from memoryboard.models import AuditLog, ChatMessage, LongTermMemory

pytestmark = pytest.mark.django_db

MARK = "ZQX7731MARK"
AGENT = f"pilot{MARK}"  # an agent whose id a client names (as /v1's model)
CONVERSATION = f"conv-{MARK}"
V1_CONVERSATION = f"v1-{MARK}"


@pytest.fixture
def agents_with_marker(settings, tmp_path):
    """The repository's agents and one whose id carries the marker."""
    from pathlib import Path

    from memoryboard.agents_config import reset_agents_config

    text = (Path(__file__).resolve().parents[2] / "agents.yaml").read_text()
    path = tmp_path / "agents.yaml"
    path.write_text(text + f"    {AGENT}:\n      memory-tools: true\n"
                           f"      long-term-memory: {{enabled: true, namespace: {AGENT}}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield
    reset_agents_config()


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
                                                "conversation_id": CONVERSATION}, format="json")
    assert turn.status_code == 200, turn.content

    # /v1/chat/completions with the user's token.
    fake.push_reply(content=f"Nice dog, {MARK}-v1reply.")
    # A fact of its own beside the pilot's: the marker two short texts share would read as one fact to the offline
    # pair model, and the extraction would reinforce the pilot's item instead of saving this one.
    fake.push_reply(content=json.dumps([{
        "type": "FACT", "content": f"User has a dog called Biscuit and walks it every morning {MARK}-v1extract"}]))
    v1 = _api(alice, token).post("/v1/chat/completions", {
        "model": "chat", "messages": [{"role": "user", "content": f"My dog is called {MARK}-v1"}]}, format="json")
    assert v1.status_code == 200, v1.content

    # /v1 with an agent, a conversation id and a client tool named by the client: the model calls the tool.
    tool = f"lookup_{MARK}"
    fake.push_reply(tool_calls=[{"name": tool, "arguments": {"city": "Oslo"}}])
    called = _api(alice, token).post("/v1/chat/completions", {
        "model": AGENT, "metadata": {"conversation_id": V1_CONVERSATION},
        "tools": [{"type": "function", "function": {"name": tool, "parameters": {"type": "object"}}}],
        "messages": [{"role": "user", "content": "I fly gliders. What is the weather in Oslo?"}]}, format="json")
    assert called.status_code == 200, called.content
    assert called.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == tool
    unknown = _api(alice, token).post("/v1/chat/completions", {
        "model": f"{MARK}-model", "messages": [{"role": "user", "content": "hi"}]}, format="json")
    assert unknown.status_code == 404

    imported = api.post("/api/v1/memories/import", {"items": [{"content": f"User imported {MARK}-import"}],
                                                     "dry_run": False}, format="json")
    assert imported.status_code == 200, imported.content

    # The import page: a file whose name carries the marker, one row naming an agent nobody has (a preview).
    client.force_login(alice)
    upload = SimpleUploadedFile(f"{MARK}-export.json", json.dumps(
        [{"content": "User imported a file", "agent": f"{MARK}-agent"}]).encode(), content_type="application/json")
    preview = client.post(reverse("my-memories-import"), {"file": upload, "mode": "skip", "agent": "chat",
                                                         "step": "preview"})
    assert preview.status_code == 200 and preview.context["summary"].invalid
    # A statement of its own (the import's reconcile step takes "User imported a file X" for a repeat of
    # "User imported X" above: one item, not two).
    upload = SimpleUploadedFile(f"{MARK}-export.json", json.dumps(
        [{"content": f"User keeps bees on the roof {MARK}-file"}]).encode(), content_type="application/json")
    applied = client.post(reverse("my-memories-import"), {"file": upload, "mode": "skip", "agent": "chat",
                                                         "step": "apply"})
    assert applied.status_code == 302, applied.content.decode()[:500]

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
              for m in ChatMessage.objects.filter(user_id=uid, conversation_id=CONVERSATION).order_by("id")
              if m.role in ("USER", "ASSISTANT") and m.content]
    trace = client.post(reverse("playground"), {"messages_json": json.dumps(pasted)})
    assert trace.status_code == 302, trace.content.decode()[:500]

    # Support applies a memory strategy to the /v1 conversation (an audit entry about the conversation).
    applied = support.post("/api/v1/strategies/memory/delete/apply", {
        "conversation_id": V1_CONVERSATION, "params": {"keep_latest": 1}}, format="json")
    assert applied.status_code == 200, applied.content


def test_a_marker_planted_through_every_write_path_is_found_nowhere_after_the_erase(
    openai_settings, settings, client, alice, bob, superuser, developer, make_memory, caplog, agents_with_marker,
):
    caplog.set_level(logging.INFO)
    make_memory(bob, f"Bob's own note, not {MARK[:4]}")
    _plant(alice=alice, superuser=superuser, developer=developer, client=client, fake=openai_settings)

    before = tables_holding(MARK)
    for table in ("ah_long_term_memory", "chat_message", "memoryboard_audit_log", "memoryboard_retrieval_receipt",
                  "memoryboard_playground_trace"):
        assert before.get(table), (table, before)
    assert any(f"{MARK}-reason" in str(d) for d in AuditLog.objects.values_list("details", flat=True))
    assert AuditLog.objects.filter(object_type="conversation", object_id=V1_CONVERSATION).exists()
    assert ChatMessage.objects.filter(agent_id=AGENT, conversation_id=V1_CONVERSATION).exists()
    # A reason says what happened; the conversation's id is in its own field, which the erase empties.
    assert not AuditLog.objects.filter(reason__contains=MARK).exists()
    saved = {m.content.rsplit(MARK, 1)[-1] for m in LongTermMemory.objects.all() if MARK in m.content}
    assert {"-extract", "-v1extract", "-patch", "-edit", "-admin", "-file"} <= saved, saved
    from django.contrib.admin.models import LogEntry

    assert LogEntry.objects.filter(object_id=_item(f"{MARK}-admin").pk).exists()
    assert "django_admin_log" not in before  # the admin's history names the item by id, never by its text

    user_data_erase(user_id=str(alice.pk), actor=alice)

    assert tables_holding(MARK) == {}
    assert MARK not in caplog.text
    assert _item("Bob's own note")


def test_reasons_written_before_the_codes_become_codes_and_lose_what_was_typed_at_the_erase(alice, bob,
                                                                                            make_memory):
    """Entries written by earlier versions ("auto_extract from <conversation id>", a judge's reasoning after
    "reconcile … (…): ", "superseded by <id>: …", "staff: <note>") become a code and its details (migration
    0021); an erase empties the details of the erased user's entries, not of anyone else's."""
    from importlib import import_module

    from memoryboard.audit import audit_record

    split_reason = import_module("memoryboard.migrations.0022_reason_details_ask_first").split_reason
    mine, theirs = make_memory(alice, "User flies gliders"), make_memory(bob, "User sails")
    legacy = [f"auto_extract from conv-{MARK}", f"reconcile update (llm:gpt): the user said {MARK}",
              f"superseded by abc: because {MARK}", f"staff: {MARK} asked"]
    for reason in legacy:
        code, details = split_reason(reason)
        for memory in (mine, theirs):
            audit_record(actor=None, action=AuditLog.Action.UPDATE, object_type="memory", object_id=memory.pk,
                         after={"value_json": memory.value_json}, reason=code, details=details)
    assert split_reason("staff") is None and split_reason("revert to version 3") == ("revert", {"version": 3})
    user_data_erase(user_id=str(alice.pk), actor=alice)
    rows = AuditLog.objects.filter(object_id=mine.pk).exclude(action="create")
    assert sorted(rows.values_list("reason", flat=True)) == sorted([
        "extracted from a conversation", "reconcile update", "superseded", "staff"])
    assert not any(rows.values_list("details", flat=True))
    assert [MARK in str(d) for d in AuditLog.objects.filter(object_id=theirs.pk).exclude(action="create")
            .values_list("details", flat=True)].count(True) == 1  # bob's stay
