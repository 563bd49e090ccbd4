"""A kept scope follows the items' change log, which the database keeps for every writer (ltm.store.change_log).

The agent platform writes ``ah_long_term_memory`` directly: a row it inserts, edits, decays, archives, moves or
deletes by plain SQL is in the next search of a warm process, which equals a cold build; that search reads the
log past its position and the items it names, not every candidate. A log pruned past the position, or a
bulk decay, sends the search to a full read; an erase takes the user's rows out of the log.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memoryboard.ltm.people.user_data import user_data_erase
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.search.vector_cache import scope_cache
from memoryboard.ltm.store import change_log
from memoryboard.ltm.store.lifecycle import memory_decay
from memoryboard.ltm.store.selectors import memory_queryset_for, user_namespaces_q
from memoryboard.models import LongTermMemory, MemoryChange
from memoryboard.models.namespaces import build_namespace
from tests.ltm.platform_sql import TABLE, held_open, platform_sql

pytestmark = pytest.mark.django_db

QUERY = "Java developer"


def _search(user):
    found = memory_rank(queryset=memory_queryset_for(user), query=QUERY, k=5, user_id=str(user.pk), min_relevance=0)
    return [(c.memory_id, c.outcome, c.parts) for c in found.candidates]


def _warm_equals_cold(user):
    warm = _search(user)
    kept = dict(scope_cache._items)
    scope_cache.clear()
    cold = _search(user)
    assert warm == cold
    scope_cache._items.clear()
    scope_cache._items.update(kept)  # the warm process goes on with what it kept
    return warm


def _full_reads(queries) -> list[str]:
    """The searches' reads of every candidate: the candidates' SQL not narrowed to ids."""
    return [q["sql"] for q in queries if "version" in q["sql"] and TABLE in q["sql"] and "scoped" not in q["sql"]
            and "IN (SELECT" not in q["sql"]]



def _platform_insert(user, pk: str, content: str) -> None:
    now = timezone.now().replace(tzinfo=None)
    platform_sql("INSERT INTO TABLE (id, namespace, key_name, value_json, created_at, updated_at, access_count, "
         "relevance_score, archived) VALUES (%s, %s, %s, %s, %s, %s, 0, 1.0, %s)",
         [pk, build_namespace(agent_namespace="chat", user_id=str(user.pk)).as_text(), pk,
          json.dumps({"content": content, "type": "FACT"}), now, now, False])


@pytest.fixture
def items(alice, make_memory):
    made = [make_memory(alice, f"User note {i} about Java and tea") for i in range(8)]
    _warm_equals_cold(alice)
    return made


def test_platform_writes_by_sql_reach_the_next_warm_search(alice, items):
    _platform_insert(alice, "platform-item-1", "User is a Java backend developer")
    after_insert = _warm_equals_cold(alice)
    assert after_insert[0][0] == "platform-item-1"

    platform_sql("UPDATE TABLE SET relevance_score = 0.05 WHERE id = %s", [items[1].pk])  # a decay: updated_at kept
    after_decay = _warm_equals_cold(alice)
    assert after_decay != after_insert

    platform_sql("UPDATE TABLE SET archived = %s, archived_reason = 'staff' WHERE id = %s", [True, items[2].pk])
    platform_sql("UPDATE TABLE SET namespace = %s WHERE id = %s",
         [build_namespace(agent_namespace="chat", user_id="nobody").as_text(), items[3].pk])
    platform_sql("DELETE FROM TABLE WHERE id = %s", [items[4].pk])
    left = {pk for pk, _outcome, _parts in _warm_equals_cold(alice)}
    assert not left & {items[2].pk, items[3].pk, items[4].pk} and items[5].pk in left

    platform_sql("UPDATE TABLE SET archived = %s, archived_reason = NULL WHERE id = %s", [False, items[2].pk])
    assert items[2].pk in {pk for pk, _outcome, _parts in _warm_equals_cold(alice)}


def test_the_search_after_a_write_reads_the_log_and_the_item_not_every_candidate(alice, items, make_memory):
    _search(alice)
    written = make_memory(alice, "User is a Java backend developer")
    with CaptureQueriesContext(connection) as queries:
        found = _search(alice)
    assert found[0][0] == written.pk
    sql = [q["sql"] for q in queries]
    assert any(MemoryChange._meta.db_table in q for q in sql)  # the log past the position
    assert any("scoped" in q for q in sql)  # the written item, through the scope's own query
    assert _full_reads(queries) == []

    with CaptureQueriesContext(connection) as queries:
        assert _search(alice) == found  # nothing since: the log alone
    assert _full_reads(queries) == [] and not any("scoped" in q["sql"] for q in queries)


def test_a_log_pruned_past_the_position_means_a_full_read(alice, items, make_memory, monkeypatch):
    written = make_memory(alice, "User is a Java backend developer")
    monkeypatch.setattr(change_log, "KEEP_ROWS", 0)
    assert change_log.memory_change_prune() > 0
    assert MemoryChange.objects.filter(pruned_through__isnull=True).count() == 0
    with CaptureQueriesContext(connection) as queries:
        found = _warm_equals_cold(alice)
    assert found[0][0] == written.pk
    assert _full_reads(queries)  # the warm search read everything (and so did the cold one)

    with CaptureQueriesContext(connection) as queries:
        _search(alice)
    assert _full_reads(queries) == []  # and follows the log again from there


def test_a_bulk_decay_means_a_full_read_and_the_log_is_pruned(alice, items, make_memory, monkeypatch):
    items += [make_memory(alice, f"User likes hiking, trip {i}") for i in range(12)]
    _search(alice)
    platform_sql("UPDATE TABLE SET relevance_score = relevance_score * 0.5")
    assert MemoryChange.objects.count() >= len(items) * 2
    with CaptureQueriesContext(connection) as queries:
        _warm_equals_cold(alice)
    assert len(_full_reads(queries)) == 2  # warm and cold alike: more than a fifth of the scope changed

    monkeypatch.setattr(change_log, "KEEP_ROWS", 4)
    assert memory_decay(now=timezone.now() + timedelta(days=3), dry_run=False)  # the decay prunes the log
    assert MemoryChange.objects.filter(pruned_through__isnull=True).count() == 4
    _warm_equals_cold(alice)


def test_a_row_committed_late_into_a_gap_is_read_when_it_appears(alice, items):
    """On MariaDB a transaction still open leaves its seq missing while later ones are seen."""
    _search(alice)
    platform_sql("UPDATE TABLE SET relevance_score = 0.01 WHERE id = %s", [items[0].pk])
    late = MemoryChange.objects.order_by("-id").first()
    late_row = (late.pk, late.memory_id, late.namespace, late.created_at)
    late.delete()  # not visible yet
    platform_sql("UPDATE TABLE SET relevance_score = 0.02 WHERE id = %s", [items[1].pk])
    _search(alice)
    MemoryChange.objects.create(pk=late_row[0], memory_id=late_row[1], namespace=late_row[2], created_at=late_row[3])
    _warm_equals_cold(alice)  # item 0's new score, read from the gap


def test_an_erase_takes_the_users_rows_out_of_the_log(alice, bob, items, make_memory):
    bobs = make_memory(bob, "Bob likes Java too")
    _search(bob)
    bob_rows = MemoryChange.objects.filter(user_namespaces_q(str(bob.pk))).count()
    assert MemoryChange.objects.filter(user_namespaces_q(str(alice.pk))).exists()

    user_data_erase(user_id=str(alice.pk), actor=None)

    assert not MemoryChange.objects.filter(user_namespaces_q(str(alice.pk))).exists()
    assert not MemoryChange.objects.filter(memory_id__in=[m.pk for m in items]).exists()
    assert MemoryChange.objects.filter(user_namespaces_q(str(bob.pk))).count() == bob_rows
    assert _search(alice) == []
    assert [pk for pk, _outcome, _parts in _search(bob)] == [bobs.pk]


def test_every_migration_leaves_the_change_logs_triggers_on_the_platform_table(monkeypatch):
    """The test database is built by every migration in turn: one that alters ``ah_long_term_memory`` after the change
    log's (Django remakes the table on SQLite, which drops its triggers) must create them again
    (``create_triggers`` of migration 0023), or every search silently reads all its candidates."""
    monkeypatch.setattr(change_log, "_kept", {})

    assert change_log._triggers_found() == len(change_log.TRIGGERS)
    assert change_log.log_kept()


def test_without_its_triggers_the_search_reads_every_candidate(alice, items, make_memory, monkeypatch):
    """A later migration remaking the table on SQLite drops its triggers: then no scope follows the log."""
    if connection.vendor != "sqlite":
        pytest.skip("DROP TRIGGER commits on MySQL/MariaDB: SQLite's test transaction takes it back")
    monkeypatch.setattr(change_log, "_kept", {})
    platform_sql(f"DROP TRIGGER {change_log.TRIGGERS[0]}")
    _platform_insert(alice, "platform-item-2", "User is a Java backend developer")
    with CaptureQueriesContext(connection) as queries:
        assert _warm_equals_cold(alice)[0][0] == "platform-item-2"
    assert len(_full_reads(queries)) == 2
    monkeypatch.setattr(change_log, "_kept", {})


def test_a_search_inside_a_transaction_rolled_back_leaves_no_trace(alice, items, make_memory):
    """A search in a transaction sees its writes; rolled back, their log rows are gone too: not kept."""
    from django.db import transaction

    class RolledBack(Exception):
        pass

    with pytest.raises(RolledBack), transaction.atomic():
        make_memory(alice, "User is a Java backend developer")
        platform_sql("UPDATE TABLE SET relevance_score = 0.01 WHERE id = %s", [items[0].pk])
        inside = _search(alice)
        assert inside[0][1] and len(inside) == len(items) + 1
        raise RolledBack
    _warm_equals_cold(alice)


@pytest.mark.django_db(transaction=True)
def test_a_write_committed_after_a_later_one_is_followed_on_mariadb(alice, make_memory):
    """Two connections: one holds an open transaction whose log row takes its number first, another
    commits a later one; the search sees the later, the earlier number as a gap, and reads it once it
    commits."""
    if connection.vendor != "mysql":
        pytest.skip("a second connection on one MariaDB/MySQL database (real commits)")
    items = [make_memory(alice, f"User note {i} about Java and tea") for i in range(8)]
    _warm_equals_cold(alice)
    with held_open("UPDATE TABLE SET relevance_score = 0.01 WHERE id = %s", [items[0].pk]):
        platform_sql("UPDATE TABLE SET relevance_score = 0.02 WHERE id = %s", [items[1].pk])  # committed at once
        _warm_equals_cold(alice)  # the later write; the earlier one not committed yet
        (kept,) = scope_cache._items.values()
        assert kept.log.gaps
    found = _warm_equals_cold(alice)  # the earlier write, read from the gap
    assert items[0].pk in {pk for pk, _outcome, _parts in found}
    LongTermMemory.objects.all().delete()
    MemoryChange.objects.all().delete()


def test_the_reconcile_steps_versions_come_from_a_kept_scope_and_the_log(alice, items, make_memory):
    """``version_rows`` (the reconcile step's candidates) of a namespace an agent's retrieval keeps: its ids
    and versions and the log's rows past it, the same rows as a full read."""
    from memoryboard.ltm.search.retrieval import memory_retrieve_ranking, namespace_scope, version_rows

    namespace = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    memory_retrieve_ranking(namespace=namespace, query=QUERY, log_access=False)

    def scope():
        return namespace_scope(namespace).filter(archived=False)

    written = make_memory(alice, "User is a Java backend developer")
    platform_sql("UPDATE TABLE SET archived = %s, archived_reason = 'staff' WHERE id = %s", [True, items[0].pk])
    with CaptureQueriesContext(connection) as queries:
        followed = version_rows(scope, sql_key=("reconcile-test",))
    assert _full_reads(queries) == []
    full = sorted(scope().values_list("pk", "updated_at"))
    assert sorted(pk for pk, _version in followed) == [pk for pk, _at in full]
    assert written.pk in dict(followed) and items[0].pk not in dict(followed)
    scope_cache.clear()
    assert sorted(version_rows(scope, sql_key=("reconcile-test",))) == sorted(followed)
