"""Retention of pasted playground traces (``PlaygroundTrace``): kept while used, removed when forgotten; and
the short links of replays (``ReplayShare``).

A trace's ``last_used_at`` moves when it is pasted again or opened (at most once a day, so a page of
htmx column requests costs one UPDATE a day, not one per column); ``purge_deleted`` removes the traces
not used for ``MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS`` (default 90; 0 keeps them forever).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memoryboard.audit import audit_record
from memoryboard.models import AuditLog, PlaygroundTrace, ReplayShare

TOUCH_EVERY = timedelta(days=1)


def trace_touch(trace: PlaygroundTrace, *, now=None) -> None:
    """Record that the trace was used, unless that was already recorded within the last day."""
    now = now or timezone.now()
    if trace.last_used_at is None or now - trace.last_used_at >= TOUCH_EVERY:
        PlaygroundTrace.objects.filter(pk=trace.pk).update(last_used_at=now)
        trace.last_used_at = now


# The erase entry's key listing the traces a privacy erase removed (their ids: digests, no content).
ERASED_TRACES = "playground_traces"


def trace_gone_because(trace_id: str) -> tuple[str, object] | None:
    """Why a trace is no longer stored, when a record says so: ``("erase", when)`` (a privacy erase removed
    it: the erase's audit entry lists its id), ``("retention", when)`` (not used for the retention
    period); ``None`` if no record names it."""
    for created_at, after in (AuditLog.objects.filter(action=AuditLog.Action.ERASE, object_type="user")
                              .order_by("-created_at").values_list("created_at", "after")[:500]):
        if isinstance(after, dict) and trace_id in (after.get(ERASED_TRACES) or []):
            return "erase", created_at
    return None


def trace_purge_expired(*, actor=None, now=None, dry_run: bool = True) -> list[str]:
    """Delete the traces not used for the retention period; one audit entry (``job``) when applied.

    Returns:
        The ids of the traces deleted (or that would be, in a dry run).
    """
    days = settings.MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS
    if days <= 0:
        return []
    cutoff = (now or timezone.now()) - timedelta(days=days)
    qs = PlaygroundTrace.objects.filter(last_used_at__lt=cutoff)
    ids = list(qs.order_by("last_used_at").values_list("pk", flat=True))
    if dry_run or not ids:
        return ids
    with transaction.atomic():
        PlaygroundTrace.objects.filter(pk__in=ids, last_used_at__lt=cutoff).delete()
        audit_record(actor=actor, action=AuditLog.Action.PURGE, object_type="job", object_id="playground_traces",
                     after={"count": len(ids), "retention_days": days}, reason="retention period over")
    return ids


MAX_SHARE_CHARS = 16_000  # a replay's query string: strategies' parameters and prices, not messages


class ShareTooLong(ValueError):
    """The configuration is longer than a short link may hold."""


def replay_share_save(*, pairs: list[tuple[str, str]], actor) -> ReplayShare:
    """Keep a replay's configuration (its query string, ``export`` left out) under a short id; the same
    configuration gives the same id.

    Raises:
        ShareTooLong: The query is longer than :data:`MAX_SHARE_CHARS`.
    """
    pairs = [[str(k), str(v)] for k, v in pairs if k != "export"]
    if sum(len(k) + len(v) + 2 for k, v in pairs) > MAX_SHARE_CHARS:
        raise ShareTooLong(f"at most {MAX_SHARE_CHARS} characters")
    values = dict(pairs)
    share, _created = ReplayShare.objects.get_or_create(
        pk=ReplayShare.digest(pairs),
        defaults={"query": pairs, "conversation_id": values.get("conversation", "")[:255],
                  "trace_id": values.get("trace", "")[:64], "created_by": actor},
    )
    return share
