"""Migration 0020 fills ``subject_user_id`` of the audit entries already written, as the writer would."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

APP = "memoryboard"
BEFORE, AFTER = (APP, "0019_memory_versions_merged_reason"), (APP, "0020_auditlog_subject_user")


@pytest.mark.django_db(transaction=True)
def test_existing_entries_get_whose_data_they_are_about():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    AuditLog, LongTermMemory = old.get_model(APP, "AuditLog"), old.get_model(APP, "LongTermMemory")
    ChatMessage = old.get_model(APP, "ChatMessage")
    try:
        LongTermMemory.objects.create(id="kept", namespace='["agent:chat","user:7","memories"]', key_name="k",
                                      value_json={"content": "x"})
        ChatMessage.objects.create(conversation_id="c-9", agent_id="chat", user_id="9", role="USER", content="hi")
        rows = {
            # a purged item: only its snapshot says whose it was
            "purged": dict(object_type="memory", object_id="gone", action="purge",
                           before={"namespace": '["agent:coder", "user:5", "memories"]', "value_json": {}}),
            # a pause of an item that still exists: no namespace recorded, the item says it
            "paused": dict(object_type="memory", object_id="kept", action="pause", before={"paused": False}),
            "export": dict(object_type="user", object_id="5", action="export", after={"count": 1}),
            "batch": dict(object_type="memory_delete_batch", object_id="b1", action="bulk", after={"user_id": "5"}),
            "strategy": dict(object_type="conversation", object_id="c-9", action="apply_strategy"),
            # anonymised by an erase: nothing says whose it was
            "erased": dict(object_type="memory", object_id="erased-item", action="update"),
            "job": dict(object_type="job", object_id="decay", action="bulk", after={"count": 3}),
        }
        ids = {key: AuditLog.objects.create(**fields).pk for key, fields in rows.items()}
        executor = MigrationExecutor(connection)
        executor.migrate([AFTER])
        new = executor.loader.project_state([AFTER]).apps.get_model(APP, "AuditLog")
        subjects = dict(new.objects.values_list("pk", "subject_user_id"))
        assert {key: subjects[pk] for key, pk in ids.items()} == {
            "purged": "5", "paused": "7", "export": "5", "batch": "5", "strategy": "9", "erased": "", "job": ""}
    finally:
        call_command("migrate", APP, verbosity=0)
