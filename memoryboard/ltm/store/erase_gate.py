"""The erase tombstone: a write whose work began before the user's erase is refused, in its own transaction.

An erase (``ltm.people.user_data.user_data_erase``) first stamps the user's tombstone row (an exclusive row lock
held until it commits), then lists and removes the rows. Every late writer (an extraction task, an agent
turn, a request saving an item) passes :func:`erase_gate_pass` inside the transaction that saves, before
it commits: it takes a shared lock on the same row and is refused if the erase happened at or after the
moment its work began. So, whatever the timing:

- a writer that passed first holds its shared lock until it commits; the erase waits for it, then sees
  (and removes) what it wrote;
- a writer that comes after the erase's stamp waits for the erase to commit, then reads ``erased_at`` and
  is refused (:class:`UserDataErased`): its transaction rolls back.

When the work began is carried by a context variable: a request sets it when it arrives
(``WorkBegunMiddleware``), a task from the turn that queued it (:func:`work_begun`). A tombstone never
has to be removed: a user who comes back starts work after it and passes (docs/decisions.md).

On SQLite, transactions are ``IMMEDIATE`` (one writer at a time): the erase and a writer cannot
interleave, and the plain read suffices.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone as dt_timezone

from django.db import connection, transaction
from django.utils import timezone

from memoryboard.models import EraseTombstone

_begun_at: ContextVar[datetime | None] = ContextVar("memoryboard_work_begun_at", default=None)


class UserDataErased(RuntimeError):
    """The user's data was erased after this work began: nothing of it may be saved."""

    def __init__(self, user_id: str) -> None:
        super().__init__(f"the data of user {user_id} was erased while this work ran; nothing was saved")
        self.user_id = user_id


def user_key(user_id: str) -> str:
    return hashlib.sha256(str(user_id).encode("utf-8", "surrogatepass")).hexdigest()


def work_begun_at() -> datetime | None:
    return _begun_at.get()


@contextmanager
def work_begun(at: datetime | None = None) -> Iterator[datetime]:
    """Writes inside this block belong to work that began at ``at`` (default: now)."""
    moment = at or timezone.now()
    token = _begun_at.set(moment)
    try:
        yield moment
    finally:
        _begun_at.reset(token)


def _lock_rows(keys: list[str]) -> dict[str, datetime | None]:
    EraseTombstone.objects.bulk_create([EraseTombstone(user_key=k) for k in keys], ignore_conflicts=True)
    if connection.vendor == "mysql":
        table = EraseTombstone._meta.db_table
        marks = ", ".join(["%s"] * len(keys))
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT user_key, erased_at FROM {table} WHERE user_key IN ({marks}) "  # noqa: S608
                           "ORDER BY user_key LOCK IN SHARE MODE", keys)
            rows = cursor.fetchall()
        # Raw rows hold the stored UTC time, naive (Django keeps UTC on MySQL).
        return {key: (timezone.make_aware(at, dt_timezone.utc) if at is not None and timezone.is_naive(at) else at)
                for key, at in rows}
    return dict(EraseTombstone.objects.filter(user_key__in=keys).values_list("user_key", "erased_at"))


def erase_gate_lock(*, user_ids: Iterable[str]) -> dict[str, datetime | None]:
    """Take the users' shared gate locks (inside the transaction that saves) and return when each was last
    erased (None: never), for a writer that filters its own rows (the access log)."""
    ids = {str(u) for u in user_ids if u not in (None, "")}
    if not ids:
        return {}
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("the erase gate must be passed inside the transaction that saves")
    keys = {user_key(u): u for u in ids}
    erased = _lock_rows(sorted(keys))
    return {keys[key]: erased.get(key) for key in keys}


def erase_gate_pass(*, user_ids: Iterable[str], begun_at: datetime | None = None) -> None:
    """Refuse the current transaction's writes for these users if their data was erased after the work
    began (``begun_at``, default the context's :func:`work_begun` time; with neither, nothing is refused,
    but the erase still waits for this transaction). Call it inside the transaction that saves.

    Raises:
        UserDataErased: one of the users was erased at or after the moment the work began.
    """
    begun_at = begun_at or _begun_at.get()
    for user_id, at in sorted(erase_gate_lock(user_ids=user_ids).items()):
        if at is not None and begun_at is not None and at >= begun_at:
            raise UserDataErased(user_id)


def erase_gate_close(*, user_id: str, at: datetime) -> None:
    """Stamp the user's tombstone: the first statement of the erase's transaction (waits for writers that
    passed the gate; holds back those that come later until the erase commits)."""
    unique = ["user_key"] if connection.features.supports_update_conflicts_with_target else None
    EraseTombstone.objects.bulk_create(
        [EraseTombstone(user_key=user_key(user_id), erased_at=at)],
        update_conflicts=True, unique_fields=unique, update_fields=["erased_at"],
    )


class WorkBegunMiddleware:
    """A request's writes belong to work that began when the request arrived (:func:`work_begun`)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with work_begun():
            return self.get_response(request)
