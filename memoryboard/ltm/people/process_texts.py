"""Every process forgets an erased user's words, not only the one that erased them.

A process keeps what users said in its memory, under their texts or their items: what the reconcile rules
read of statements (``ltm.write.reconcile_offline``), the encoder's recent vectors and the hashing embedder's
words (``llm.embeddings``), the searches' scopes (vectors and keyword postings, ``ltm.search.vector_cache``)
and the reconcile step's scopes (``ltm.write.reconcile_scope``). The erase empties them in its own process
(:func:`forget_user_texts`); every other process empties them within ``MEMORYBOARD_ERASE_FOLLOW_SECONDS``
(:func:`erase_follow_start`), when the newest erase tombstone (``ltm.store.erase_gate``) moved. Which user
it was is not known there (the tombstone holds a digest of the id), so everything goes: an erase is rare,
and what follows is one cold read per scope.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Max

from memoryboard.llm.embeddings import forget_text_features
from memoryboard.ltm.search.vector_cache import scope_cache
from memoryboard.ltm.store.schedule import Schedule
from memoryboard.ltm.write.reconcile_offline import forget_statement_texts
from memoryboard.ltm.write.reconcile_scope import forget_scope_indexes
from memoryboard.models import EraseTombstone

_seen: dict[str, tuple | None] = {"erases": None}  # where the erases stood at this process's last turn


def forget_user_texts() -> None:
    """Empty every cache of this process that holds what users said, or vectors and postings made of it."""
    forget_text_features()
    forget_statement_texts()
    scope_cache.clear()
    forget_scope_indexes()


def erases_seen() -> tuple:
    """Where the erases stand: how many users were erased, and the newest erase (a second erase of one user
    moves it). A writer's gate row without an erase (``erased_at`` empty) counts for nothing."""
    found = EraseTombstone.objects.aggregate(users=Count("erased_at"), newest=Max("erased_at"))
    return found["users"], found["newest"]


def erase_follow_turn() -> bool:
    """One turn of the follower: empty this process's caches when an erase happened since the last turn (the
    first turn only notes where the erases stand). True when it emptied them."""
    now = erases_seen()
    seen, _seen["erases"] = _seen["erases"], now
    if seen is None or seen == now:
        return False
    forget_user_texts()
    return True


def _interval() -> float:
    return float(getattr(settings, "MEMORYBOARD_ERASE_FOLLOW_SECONDS", 0) or 0)


_follower = Schedule("erase-follow", interval=_interval, turn=lambda: erase_follow_turn(),
                     failed="reading the erase tombstones failed")


def erase_follow_start() -> None:
    """Start this process's follower (once per process; nothing when the interval is 0): a turn now, then one
    every ``MEMORYBOARD_ERASE_FOLLOW_SECONDS`` (read at each turn: set to 0, it stops)."""
    _follower.start()
