"""The reconcile step's kept index of a namespace follows the items' change log once a save has committed.

A save reads the log's rows past the index's position and the items they name, not every item's version
(what made a single save at 5,000 items read 5,000 rows): its candidates are those a fresh build finds,
whoever wrote in between (a save, an edit, a delete, the platform's plain SQL). Only what a committed
transaction read is kept: a save rolled back leaves the position where it was, and the next save does not
see its item.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.store.items import memory_delete_for_user
from memoryboard.ltm.write import reconcile_scope
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.ltm.write.reconcile_scope import forget_scope_indexes, nearest_current
from memoryboard.ltm.write.statements import statement_slots
from memoryboard.models import LongTermMemory
from memoryboard.models.namespaces import build_namespace
from tests.ltm.platform_sql import held_open, platform_sql

TEXTS = ["I live in Shanghai", "I like jazz", "I work at Siemens", "My favourite drink is tea", "我喜欢跑步",
         "I have two cats", "I moved to Berlin last year", "我住在上海", "My sister is a nurse", "I drive a Volvo"]
QUERIES = ["I moved to Munich", "I like jazz", "My favourite drink is water", "我喜欢游泳", "cats", "I drive a Tesla"]


def ns(user):
    return build_namespace(agent_namespace="chat", user_id=str(user.pk))


def save(user, content):
    return memory_save_reconciled(namespace=ns(user), content=content, memory_type="FACT", agent_id="chat")


def found(user, query, count=4):
    embedder = get_embedder()
    slots = {slot.key for slot in statement_slots(query)}
    return nearest_current(namespace=ns(user), vector=embedder.embed([query])[0], slot_keys=slots,
                           embedder=embedder, count=count)


def every_version_read(queries) -> list[str]:
    """The reads of every item's id and version: the scope's SQL not narrowed to ids (``scoped``)."""
    return [q["sql"] for q in queries
            if re.search(r"""AS ["`]version["`] FROM""", q["sql"]) and "scoped" not in q["sql"]]


def followed_position():
    (index,) = reconcile_scope._indexes.values()
    return None if index.followed is None else index.followed[0].seq


def assert_as_a_fresh_build(user):
    kept = [found(user, query) for query in QUERIES]
    forget_scope_indexes()
    fresh = [found(user, query) for query in QUERIES]
    assert [[pk for pk, _c in result] for result in kept] == [[pk for pk, _c in result] for result in fresh]
    for a, b in zip(kept, fresh):
        assert [c for _pk, c in a] == pytest.approx([c for _pk, c in b], abs=1e-3)
    current = set(LongTermMemory.objects.filter(archived=False).values_list("pk", flat=True))
    assert {pk for result in kept for pk, _c in result} <= current
    return kept



@pytest.mark.django_db
def test_a_save_after_a_committed_one_reads_the_log_not_every_version(alice, django_capture_on_commit_callbacks):
    """Saves, an edit, a delete and the platform's archive by SQL between two searches of candidates: the
    later ones read the log's rows and the items they name, and find what a fresh build finds."""
    with django_capture_on_commit_callbacks(execute=True):
        saved = [save(alice, text).memory for text in TEXTS]
    assert followed_position() is not None
    with django_capture_on_commit_callbacks(execute=True):
        memory_update(memory=saved[2], actor=alice, content="I work at Bosch")
        memory_delete_for_user(memory=saved[5], actor=alice)
        platform_sql("UPDATE TABLE SET archived = %s, archived_reason = 'staff' WHERE id = %s", [True, saved[9].pk])
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        drink = save(alice, "My favourite drink is coffee")
        save(alice, "My brother is a pilot")
    assert every_version_read(queries) == []
    assert drink.decision.verdict == "update" and drink.superseded == [saved[3].pk]
    with django_capture_on_commit_callbacks(execute=True):
        kept = [found(alice, query, count=len(TEXTS)) for query in QUERIES]
    ids = {pk for result in kept for pk, _c in result}
    assert saved[5].pk not in ids and saved[9].pk not in ids and saved[3].pk not in ids
    assert drink.memory.pk in ids
    assert_as_a_fresh_build(alice)


@pytest.mark.django_db
def test_without_a_commit_nothing_is_followed(alice):
    """Inside a transaction that has not committed (the test's own), every save reads every version as
    before: the position is kept only once what was read is committed."""
    for text in TEXTS[:4]:
        save(alice, text)
    assert followed_position() is None
    with CaptureQueriesContext(connection) as queries:
        save(alice, "I like jazz a lot")
    assert every_version_read(queries)


class RolledBack(Exception):
    pass


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_save_keeps_no_position_and_its_item_is_not_a_candidate(alice):
    """Real commits: a save whose transaction is rolled back (the agent's turn failed after it) leaves the
    kept position as it was; the next save does not compare with the item taken back, reads the log past
    the committed position, and finds what a fresh build finds."""
    for text in TEXTS:
        save(alice, text)
    before = followed_position()
    assert before is not None
    with pytest.raises(RolledBack), transaction.atomic():
        taken_back = save(alice, "I drive a Tesla now").memory
        raise RolledBack
    assert followed_position() == before
    assert not LongTermMemory.objects.filter(pk=taken_back.pk).exists()
    platform_sql("DELETE FROM TABLE WHERE id = %s", [LongTermMemory.objects.get(value_json__content="I like jazz").pk])
    with CaptureQueriesContext(connection) as queries:
        result = save(alice, "I drive a Tesla now")
    assert every_version_read(queries) == []
    assert result.decision.verdict == "update"
    assert followed_position() > before
    kept = assert_as_a_fresh_build(alice)
    ids = {pk for found_ in kept for pk, _c in found_}
    assert taken_back.pk not in ids and result.memory.pk in ids
    LongTermMemory.objects.all().delete()


@pytest.mark.django_db(transaction=True)
def test_a_log_pruned_past_the_position_reads_every_version_again(alice):
    """An erase or a prune deletes log rows the index has not taken in (a marker past its position): the
    next save reads every version, and still finds what a fresh build finds."""
    for text in TEXTS[:6]:
        save(alice, text)
    platform_sql("UPDATE TABLE SET archived = %s, archived_reason = 'staff' WHERE id = %s",
         [True, LongTermMemory.objects.get(value_json__content="I like jazz").pk])
    _prune_everything()
    with CaptureQueriesContext(connection) as queries:
        save(alice, "I have three cats")
    assert every_version_read(queries)
    assert_as_a_fresh_build(alice)
    LongTermMemory.objects.all().delete()


def _prune_everything() -> None:
    from datetime import timedelta

    from django.utils import timezone

    from memoryboard.ltm.store.change_log import memory_change_prune

    memory_change_prune(now=timezone.now() + timedelta(days=2))


@pytest.mark.django_db(transaction=True)
def test_a_write_committed_after_a_later_one_is_followed_on_mariadb(alice):
    """Two connections: the platform archives an item in a transaction left open, so its log row takes its
    number first; saves commit later rows. The next candidates still hold the item (not committed), the
    earlier number is kept as a gap, and once it commits the item is no longer a candidate."""
    if connection.vendor != "mysql":
        pytest.skip("a second connection on one MariaDB/MySQL database (real commits)")
    saved = [save(alice, text).memory for text in TEXTS]
    jazz = next(m for m in saved if m.content == "I like jazz")
    with held_open("UPDATE TABLE SET archived = %s, archived_reason = 'staff' WHERE id = %s", [True, jazz.pk]):
        save(alice, "My brother is a pilot")  # committed at once, its log rows numbered after the open one
        assert jazz.pk in {pk for pk, _c in found(alice, "I like jazz", count=len(TEXTS))}
        (index,) = reconcile_scope._indexes.values()
        assert index.followed[0].gaps
    with CaptureQueriesContext(connection) as queries:
        after = found(alice, "I like jazz", count=len(TEXTS))
    assert every_version_read(queries) == []
    assert jazz.pk not in {pk for pk, _c in after}
    assert_as_a_fresh_build(alice)
    LongTermMemory.objects.all().delete()
