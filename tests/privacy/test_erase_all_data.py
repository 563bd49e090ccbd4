"""Erase and export cover everything stored about a user: the same rows, table by table; nobody else's.

The data is made by the real paths where there is one (an agent turn: messages, claim, receipt, access
log; the services: flags, state changes, audit), and directly for the rest (cached summaries, an
extraction task in the database backend, a purged item's audit entry).
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.apps import apps
from django.core import serializers
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from memoryboard.ltm.people.user_data import memory_export_payload, user_data_erase, user_data_sections
from memoryboard.ltm.store.items import memory_delete_for_user, memory_purge_deleted, memory_set_paused
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.items import memory_create
from memoryboard.models import (
    AskFirst,
    ArchivedReason,
    AuditLog,
    ChatMessage,
    ConversationOwner,
    LongTermMemory,
    PauseRule,
    SummaryCacheEntry,
    UserMemorySettings,
)
from memoryboard.task_recovery import EXTRACT_TASK_PATH

pytestmark = pytest.mark.django_db

CHAT = "/api/v1/agents/chat/chat"

# Tables that hold nothing about a platform user (or only the account, which stays). A new table must be
# put in ``user_data_sections`` or here, with its reason: this list is what makes the test fail otherwise.
NOT_USER_DATA = {
    "memoryboard_ann_change": "index change log: item and vector ids, no content; kept until pruned so every host removes an erased vector",
    "memoryboard_memory_change": "the items' change log (item ids and namespaces, written by triggers): the erase deletes the user's rows after the items, whose deletion writes them",
    "memoryboard_erase_tombstone": "a hash of the user id and the erase time: what refuses late writes",
    "memoryboard_worker_heartbeat": "task workers' ids and last beats, no user",
}


@pytest.fixture
def _embedder(use_embedder):
    return use_embedder


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _populate(user, marker: str, make_memory) -> None:
    """Something in every section for ``user``; every text (not the ids) carries ``marker``."""
    uid = str(user.pk)
    conv = f"conv-{uid}"
    api = _api(user)
    kept = make_memory(user, f"{marker} works with Java every day")
    paused = make_memory(user, f"{marker} likes green tea", memory_type="PREFERENCE")
    memory_set_paused(memory=paused, actor=user, paused=True)
    make_memory(user, f"{marker} old habit", archived_reason=ArchivedReason.DECAY)
    deleted = make_memory(user, f"{marker} deleted note")
    memory_delete_for_user(memory=deleted, actor=user)
    memory_update(memory=kept, actor=user, content=f"{marker} works with Java and Kotlin")
    # An item purged long ago: only its audit entry (with its content) is left.
    purged = make_memory(user, f"{marker} purged long ago")
    memory_delete_for_user(memory=purged, actor=user)
    LongTermMemory.objects.filter(pk=purged.pk).update(archived_at=timezone.now() - timedelta(days=400))
    memory_purge_deleted(dry_run=False)
    response = api.post(CHAT, {"message": f"What do I use at work? {marker}", "conversation_id": conv},
                        format="json")
    assert response.status_code == 200, response.content
    SummaryCacheEntry.objects.create(conversation_id=conv, model="m", prompt_hash="p",
                                     prefix_hash="x" * 64, message_count=2, summary=f"{marker} summary")
    PauseRule.objects.create(user_id=uid, memory_type="EPISODE")
    UserMemorySettings.objects.create(user_id=uid, use_memories=True, save_memories=False)
    AskFirst.objects.create(user_id=uid, agent_id="support-bot", ask_first=True)
    AuditLog.objects.create(action=AuditLog.Action.APPLY_STRATEGY, object_type="conversation",
                            object_id=conv, before={"deleted": [{"content": f"{marker} said"}]})
    AuditLog.objects.create(action=AuditLog.Action.BULK, object_type="memory_delete_batch", object_id=f"batch-{uid}",
                            after={"user_id": uid, "ids": [deleted.pk]})
    # The admin's history as Django wrote it before (the item's text as object_repr), and a playground trace
    # a staff member made by pasting the user's conversation.
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.contenttypes.models import ContentType

    from memoryboard.models import PlaygroundTrace

    LogEntry.objects.create(user_id=user.pk, content_type=ContentType.objects.get_for_model(LongTermMemory),
                            object_id=kept.pk, object_repr=f"{marker} works with Java", action_flag=CHANGE)
    pasted = [{"role": m.role.lower(), "content": m.content} for m in ChatMessage.objects.filter(user_id=uid)]
    PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(pasted), messages=pasted)
    from memoryboard.playground_traces import replay_share_save

    # A short link of a replay of the user's conversation (its summary prompt typed with the user's words).
    replay_share_save(pairs=[("conversation", conv), ("c-summarize-summary_prompt", f"{marker} prompt")], actor=None)
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.create(
        args_kwargs={"args": [], "kwargs": {"agent_id": "chat", "user_id": uid, "conversation_id": conv,
                                            "conversation": [{"role": "user", "content": f"{marker} turn"}]}},
        task_path=EXTRACT_TASK_PATH, backend_name="default", queue_name="default", run_after=timezone.now(),
        exception_class_path="", traceback="", priority=0,
    )


def _rows_by_table(payload: dict) -> dict[str, set[str]]:
    return {payload["tables"][key]: {str(row["id"]) for row in payload[key]} for key in payload["tables"]}


def _dump_all() -> str:
    """Every row of every table, as text."""
    return "".join(serializers.serialize("json", model.objects.all()) for model in apps.get_models())


def test_export_lists_exactly_what_erase_removes_and_nothing_of_anyone_else(alice, bob, make_memory, _embedder):
    _populate(alice, "ALICEMARK", make_memory)
    _populate(bob, "BOBMARK", make_memory)
    bobs_before = memory_export_payload(user_id=str(bob.pk))
    exported = memory_export_payload(user_id=str(alice.pk))
    assert all(exported[key] for key in exported["tables"]), {k: len(exported[k]) for k in exported["tables"]}
    assert "ALICEMARK" in json.dumps(exported) and "BOBMARK" not in json.dumps(exported)

    erased = user_data_erase(user_id=str(alice.pk), actor=alice)

    assert {table: set(ids) for table, ids in erased.items()} == _rows_by_table(exported)
    dump = _dump_all()
    assert "ALICEMARK" not in dump  # no content left anywhere, in any table (audit entries included)
    assert dump.count("BOBMARK") > 10
    bobs_after = memory_export_payload(user_id=str(bob.pk))
    for key in bobs_before["tables"]:
        assert bobs_after[key] == bobs_before[key], key
    again = memory_export_payload(user_id=str(alice.pk))
    assert {key for key in again["tables"] if again[key]} == {"audit_log"}  # the erase's own entry
    entry = AuditLog.objects.get(action="erase", object_id=str(alice.pk))
    assert entry.after["tables"]["chat_message"] == len(exported["chat_messages"]) > 0
    assert [row["id"] for row in again["audit_log"]] == [str(entry.pk)]


def test_every_table_is_either_erased_or_listed_as_not_user_data():
    covered = {section.table for section in user_data_sections()}
    ours = {model._meta.db_table for model in apps.get_app_config("memoryboard").get_models()}
    assert ours - covered - set(NOT_USER_DATA) == set()
    assert covered & set(NOT_USER_DATA) == set()


def test_web_erase_asks_for_the_box_then_erases_with_no_undo(client, alice, bob, make_memory):
    mine = make_memory(alice, "alice likes tea")
    other = make_memory(bob, "bob likes coffee")
    ChatMessage.objects.create(conversation_id="c1", agent_id="chat", user_id=str(alice.pk), role="USER", content="hi")
    ConversationOwner.objects.create(conversation_id="c1", user_id=str(alice.pk), agent_id="chat")
    client.force_login(alice)
    page = client.get(reverse("my-data-erase"))
    html = page.content.decode()
    assert page.status_code == 200 and "csrfmiddlewaretoken" in html and "cannot be undone" in html
    rows = {key: n for key, _label, n in page.context["rows"]}
    assert rows["memories"] == 1 and rows["chat_messages"] == 1 and rows["conversations"] == 1
    refused = client.post(reverse("my-data-erase"), {"confirm": "no"})
    assert refused.status_code == 400 and 'id="erase-error"' in refused.content.decode()
    assert LongTermMemory.objects.filter(pk=mine.pk).exists()
    done = client.post(reverse("my-data-erase"), {"confirm": "yes"}, follow=True)
    assert "Everything stored about you was erased" in done.content.decode()
    assert not LongTermMemory.objects.filter(pk=mine.pk).exists()
    assert not ChatMessage.objects.filter(user_id=str(alice.pk)).exists()
    assert LongTermMemory.objects.filter(pk=other.pk).exists()
    assert 'id="undo-bar"' not in done.content.decode()  # nothing to restore: no undo is offered
    assert AuditLog.objects.get(action="erase").reason == "erase all my data"


def test_web_erase_needs_csrf(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(reverse("my-data-erase"), {"confirm": "yes"}).status_code == 403


def test_api_export_equals_the_web_export_and_erase_needs_confirm(client, alice, bob, make_memory):
    make_memory(alice, "alice likes tea")
    make_memory(bob, "bob likes coffee")
    api = _api(alice)
    client.force_login(alice)
    web = json.loads(client.get(reverse("my-memories-export")).content)
    exported = api.get("/api/v1/me/data/").json()
    assert {k: v for k, v in exported.items() if k != "exported_at"} == {k: v for k, v in web.items() if k != "exported_at"}
    for body, field in (({}, "confirm"), ({"confirm": False}, "confirm"), ({"confirm": True, "user": "2"}, "user")):
        response = api.post("/api/v1/me/data/erase/", body, format="json")
        assert response.status_code == 400 and field in response.json()["error"]["fields"], response.content
    assert LongTermMemory.objects.count() == 2
    response = api.post("/api/v1/me/data/erase/", {"confirm": True}, format="json")
    assert response.status_code == 200 and response.json()["erased"]["ah_long_term_memory"] == 1
    assert [m.content for m in LongTermMemory.objects.all()] == ["bob likes coffee"]
    assert APIClient().post("/api/v1/me/data/erase/", {"confirm": True}, format="json").status_code == 401


def test_user_ids_that_differ_only_in_case_are_different_people(make_memory):
    # MySQL's collations ignore case: "Ana" and "ana" are two platform users, and erasing one leaves the other.
    from memoryboard.models.namespaces import build_namespace

    for uid in ("Ana", "ana"):
        memory_create(namespace=build_namespace(agent_namespace="chat", user_id=uid), content=f"{uid} item",
                               memory_type="FACT", source="agent_tool", agent_id="chat")
        ChatMessage.objects.create(conversation_id=f"c-{uid}-{len(uid)}{uid[0]}", agent_id="chat", user_id=uid,
                                   role="USER", content=f"{uid} says hi")
        # (types differ: MySQL's unique key on pause rules ignores case too)
        PauseRule.objects.create(user_id=uid, memory_type="EPISODE" if uid == "Ana" else "FACT")
        AuditLog.objects.create(action=AuditLog.Action.EXPORT, object_type="user", object_id=uid, after={"count": 1})
        AuditLog.objects.create(action=AuditLog.Action.BULK, object_type="memory_delete_batch", object_id=f"b{uid}",
                                after={"user_id": uid, "ids": []})
    exported = memory_export_payload(user_id="Ana")
    assert [m["content"] for m in exported["memories"]] == ["Ana item"]
    assert [m["content"] for m in exported["chat_messages"]] == ["Ana says hi"]
    assert len(exported["pause_rules"]) == 1 and len(exported["audit_log"]) == 3  # create, export, batch
    erased = user_data_erase(user_id="Ana", actor=None)
    assert {table: set(ids) for table, ids in erased.items()} == _rows_by_table(exported)
    assert [m.content for m in LongTermMemory.objects.all()] == ["ana item"]
    assert list(ChatMessage.objects.values_list("user_id", flat=True)) == ["ana"]
    assert list(PauseRule.objects.values_list("user_id", flat=True)) == ["ana"]
    kept = {e.object_id: e.after for e in AuditLog.objects.exclude(action="erase")}
    assert kept["ana"] == {"count": 1} and kept["bana"] == {"user_id": "ana", "ids": []}  # untouched
    assert kept["Ana"] is None and kept["bAna"] is None  # anonymised


def test_erase_takes_the_vectors_out_of_the_hnsw_index(settings, tmp_path, alice, bob, make_memory):
    from io import StringIO

    from django.core.management import call_command

    from memoryboard.ltm.search import ann
    from memoryboard.models import MemoryEmbedding

    settings.MEMORYBOARD_ANN_DIR = str(tmp_path / "ann")
    ann._views.clear()
    try:
        mine = [make_memory(alice, "User plays the violin"), make_memory(alice, "User drinks tea", archived_reason="decay")]
        other = make_memory(bob, "User plays the piano")
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        keys = dict(MemoryEmbedding.objects.values_list("memory_id", "id"))
        model = MemoryEmbedding.objects.values_list("model_name", flat=True).first()
        assert keys[mine[0].pk] in ann._snapshot(model)[0] and keys[other.pk] in ann._snapshot(model)[0]
        user_data_erase(user_id=str(alice.pk), actor=alice)
        ann._views.clear()
        index = ann._snapshot(model)[0]
        assert keys[mine[0].pk] not in index and keys[mine[1].pk] not in index
        assert keys[other.pk] in index
    finally:
        ann._views.clear()


def test_erase_of_a_heavy_account_goes_through_in_batches(make_memory, alice, bob):
    """An account with more rows than one statement may name: erased in batches, in the same transaction,
    nobody else's rows touched. SQLite's host-parameter limit is lowered to 999 (the default of SQLite
    builds before 3.32; 250,000 on this one) so that 5,000 access-log rows stand for a heavy account."""
    import sqlite3

    from django.db import connection

    from memoryboard.models import MemoryAccess

    mine, theirs = make_memory(alice, "alice item read every day"), make_memory(bob, "bob item")
    now = timezone.now()
    MemoryAccess.objects.bulk_create(
        [MemoryAccess(memory_id=mine.pk, kind="retrieval", created_at=now) for _ in range(5_000)]
        + [MemoryAccess(memory_id=theirs.pk, kind="retrieval", created_at=now) for _ in range(3)],
        batch_size=500)
    ChatMessage.objects.bulk_create(
        [ChatMessage(conversation_id="heavy", agent_id="chat", user_id=str(alice.pk), role="USER", content=f"m{i}")
         for i in range(1_500)], batch_size=500)
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    try:
        erased = user_data_erase(user_id=str(alice.pk), actor=alice)
    finally:
        if connection.vendor == "sqlite":
            connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 250_000)
    assert len(erased["memoryboard_memory_access"]) == 5_000
    assert len(erased["chat_message"]) == 1_500
    assert not MemoryAccess.objects.filter(memory_id=mine.pk).exists()
    assert MemoryAccess.objects.filter(memory_id=theirs.pk).count() == 3
    assert not ChatMessage.objects.filter(user_id=str(alice.pk)).exists()
    assert LongTermMemory.objects.filter(pk=theirs.pk).exists()


def test_erase_leaves_none_of_the_users_texts_in_the_process_memory(alice):
    """What the reconcile rules read of statements and the encoder's recent vectors are kept per text in this
    process: an erase empties them (another user's next save reads its texts again, with the same result)."""
    import numpy as np

    from memoryboard.llm.embeddings import UniversalSentenceEncoder
    from memoryboard.ltm.write import reconcile_offline

    said, stored = "I moved to Porto last month.", "I live in Lisbon."
    attr = ("residence", 0.5, 0.1)
    before = reconcile_offline.relate(said, stored, cosine=0.7, new_attr=attr, old_attr=attr)
    UniversalSentenceEncoder.recent.embed([said], lambda texts: np.ones((len(texts), 2), dtype=np.float32))
    cached = (reconcile_offline._parsed, reconcile_offline._value_words, reconcile_offline._whose)
    assert all(c.cache_info().currsize for c in cached)
    user_data_erase(user_id=str(alice.pk), actor=alice)
    assert [c.cache_info().currsize for c in cached] == [0, 0, 0]
    assert len(UniversalSentenceEncoder.recent._vectors) == 0
    assert reconcile_offline.relate(said, stored, cosine=0.7, new_attr=attr, old_attr=attr) == before
