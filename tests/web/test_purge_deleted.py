"""The purge_deleted command: a dry run unless --apply; only user deletes past the retention period."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from memoryboard.models import ArchivedReason, LongTermMemory

pytestmark = pytest.mark.django_db


def test_dry_run_then_apply(alice, make_memory, settings):
    settings.MEMORYBOARD_DELETED_RETENTION_DAYS = 30
    old = make_memory(alice, "old", archived_reason=ArchivedReason.USER_DELETED)
    recent = make_memory(alice, "recent", archived_reason=ArchivedReason.USER_DELETED)
    decayed = make_memory(alice, "decayed", archived_reason=ArchivedReason.DECAY)
    LongTermMemory.objects.filter(pk__in=[old.pk, decayed.pk]).update(archived_at=timezone.now() - timedelta(days=40))
    out = StringIO()
    call_command("purge_deleted", stdout=out)
    assert "Would purge 1 item(s)" in out.getvalue() and old.pk in out.getvalue()
    assert LongTermMemory.objects.count() == 3
    call_command("purge_deleted", "--apply", stdout=StringIO())
    assert set(LongTermMemory.objects.values_list("pk", flat=True)) == {recent.pk, decayed.pk}
