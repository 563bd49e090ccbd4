"""Pasted playground traces expire: kept while opened, removed by purge_deleted once forgotten."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from memoryboard.models import AuditLog, PlaygroundTrace
from memoryboard.playground_traces import trace_purge_expired

pytestmark = pytest.mark.django_db


def _trace(text: str, *, idle_days: float) -> PlaygroundTrace:
    messages = [{"role": "user", "content": text}]
    return PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(messages), messages=messages,
                                          last_used_at=timezone.now() - timedelta(days=idle_days))


def test_purge_removes_only_traces_idle_past_the_retention(settings):
    settings.MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS = 30
    old, fresh = _trace("old", idle_days=31), _trace("fresh", idle_days=29)
    assert trace_purge_expired() == [old.pk]  # a dry run by default
    assert PlaygroundTrace.objects.count() == 2 and not AuditLog.objects.exists()
    assert trace_purge_expired(dry_run=False, actor="test") == [old.pk]
    assert list(PlaygroundTrace.objects.values_list("pk", flat=True)) == [fresh.pk]
    entry = AuditLog.objects.get()
    assert (entry.action, entry.object_type, entry.after["count"]) == ("purge", "job", 1)


def test_zero_keeps_traces_forever(settings):
    settings.MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS = 0
    _trace("ancient", idle_days=5000)
    assert trace_purge_expired(dry_run=False) == [] and PlaygroundTrace.objects.count() == 1


def test_opening_a_trace_keeps_it(login, developer, settings):
    settings.MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS = 30
    trace = _trace("in use", idle_days=29.5)
    assert login(developer).get(reverse("playground"), {"trace": trace.pk}).status_code == 200
    trace.refresh_from_db()
    assert timezone.now() - trace.last_used_at < timedelta(minutes=1)
    assert trace_purge_expired(now=timezone.now() + timedelta(days=29)) == []


def test_a_trace_is_touched_at_most_once_a_day(login, developer):
    trace = _trace("busy", idle_days=0.5)
    before = PlaygroundTrace.objects.get(pk=trace.pk).last_used_at
    login(developer).get(reverse("playground"), {"trace": trace.pk})
    assert PlaygroundTrace.objects.get(pk=trace.pk).last_used_at == before


def test_pasting_again_renews_the_trace(login, developer):
    messages = [{"role": "user", "content": "pasted twice"}]
    old = PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(messages), messages=messages,
                                         last_used_at=timezone.now() - timedelta(days=80))
    import json

    assert login(developer).post(reverse("playground"), {"messages_json": json.dumps(messages)}).status_code == 302
    assert timezone.now() - PlaygroundTrace.objects.get(pk=old.pk).last_used_at < timedelta(minutes=1)


def test_purge_deleted_command_reports_and_applies(settings):
    settings.MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS = 7
    _trace("stale", idle_days=8)
    out = StringIO()
    call_command("purge_deleted", stdout=out)
    assert "Would purge 1 playground trace(s) not opened for 7 days." in out.getvalue()
    assert "Dry run" in out.getvalue() and PlaygroundTrace.objects.count() == 1
    call_command("purge_deleted", "--apply", stdout=StringIO())
    assert not PlaygroundTrace.objects.exists()
