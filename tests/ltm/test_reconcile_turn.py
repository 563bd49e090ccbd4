"""A chat turn's statements reconciled together, as the extraction task saves them
(``reconcile.memory_save_many_reconciled``): what each decides, what is written, and what is read."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.write.reconcile import memory_save_many_reconciled
from memoryboard.models import AuditLog, LongTermMemory, MemoryVersion
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db

THINGS = ["jazz", "hiking", "chess", "the guitar", "sourdough", "photography", "gardening", "sushi", "yoga",
          "Kyoto", "Lisbon", "Postgres", "red wine", "Rust", "Japanese", "tennis", "opera", "cycling", "tea",
          "poetry", "knitting", "surfing", "Go", "bonsai", "pottery", "salsa", "origami", "rowing", "Ghibli", "sumo"]


def ns(user):
    return build_namespace(agent_namespace="chat", user_id=str(user.pk))


def built(user, *statements):
    return [memory_build(namespace=ns(user), content=text, memory_type="FACT", source="auto_extract",
                         agent_id="chat") for text in statements]


def turn(user, *statements):
    memories = built(user, *statements)
    return memory_save_many_reconciled(namespace=ns(user), memories=memories, event="extract")


def current(user):
    return sorted(m.content for m in LongTermMemory.objects.filter(namespace=ns(user).as_text(), archived=False))


def item_reads(queries) -> int:
    """The queries that read the owner's items (their rows, versions or vectors), not the writes."""
    table = LongTermMemory._meta.db_table
    return sum(1 for q in queries if q["sql"].lstrip().upper().startswith("SELECT") and table in q["sql"])


def test_a_turn_reads_the_owners_items_once_however_many_statements_it_has(alice):
    """Each statement of a turn is compared with the owner's items: they are read once for the turn (their
    versions, the vectors of those written since the last turn, the candidates' rows), not once per statement."""
    turn(alice, *[f"I read a book about {thing}" for thing in THINGS])  # the items the turn is compared with
    turn(alice, "I often visit Paris")
    three = built(alice, "My brother plays the violin", "I have a grey cat", "I work night shifts")
    ten = built(alice, "My flat has three rooms", "My car is a blue Volvo", "I was born in Lyon", "I speak Danish",
                "My favourite film is Alien", "I sleep at eleven", "I collect old stamps", "I am allergic to peanuts",
                "I run on Sundays", "My dentist is in Bergen")
    with CaptureQueriesContext(connection) as three_queries:
        short = memory_save_many_reconciled(namespace=ns(alice), memories=three, event="extract")
    with CaptureQueriesContext(connection) as ten_queries:
        long = memory_save_many_reconciled(namespace=ns(alice), memories=ten, event="extract")
    assert [(r.memory.content, r.decision.verdict) for r in short + long] == [  # nothing repeats or replaces
        (r.memory.content, "new") for r in short + long]
    assert item_reads(ten_queries.captured_queries) == item_reads(three_queries.captured_queries) <= 3
    # The new items' rows, vectors and versions are written once for the turn; each has its audit entry.
    assert len(ten_queries.captured_queries) - len(three_queries.captured_queries) <= 7
    assert len(current(alice)) == len(THINGS) + 14


def test_a_later_statement_replaces_an_earlier_one_of_the_same_turn(alice):
    """Statement 3 of a turn updates what statement 1 said: the turn's own earlier item is superseded by it
    (and the unrelated statement 2 is kept), though the turn's items were not stored when it was decided."""
    turn(alice, *[f"I read a book about {thing}" for thing in THINGS[:12]])
    first, second, third = turn(alice, "I live in London", "I work at Google", "I moved to Paris")
    assert first.created and third.created
    assert third.superseded == [first.memory.pk]
    first.memory.refresh_from_db()
    assert first.memory.archived_reason == "superseded" and first.memory.superseded_by == third.memory.pk
    assert "I work at Google" in current(alice) and "I moved to Paris" in current(alice)
    assert "I live in London" not in current(alice)


def test_a_turn_stores_its_new_items_and_reinforces_what_it_repeats(alice):
    """A turn mixing new statements and a repeat: each new item is stored with its vector, its version 1
    and its own audit entry naming the decision, in the order said; the repeated item is reinforced."""
    berlin = turn(alice, "I live in Berlin")[0].memory
    results = turn(alice, "I like jazz", "I live in Berlin", "I work at Siemens")
    assert [r.decision.verdict for r in results] == ["new", "same", "new"]
    assert results[1].memory.pk == berlin.pk and not results[1].created
    berlin.refresh_from_db()
    assert berlin.value_json["seenCount"] == 2
    created = [results[0].memory.pk, results[2].memory.pk]
    assert list(AuditLog.objects.filter(action="create", object_id__in=created).order_by("id")
                .values_list("object_id", "after__reconcile__decision")) == [(created[0], "new"), (created[1], "new")]
    assert sorted(MemoryVersion.objects.filter(memory_id__in=created).values_list("memory_id", "version", "reason")) \
        == sorted((pk, 1, "reconcile new") for pk in created)
    assert LongTermMemory.objects.get(pk=created[1]).embeddings.count() == 1
    assert current(alice) == ["I like jazz", "I live in Berlin", "I work at Siemens"]


def test_a_statement_said_twice_in_a_turn_that_repeats_a_stored_item_reinforces_it_once(alice):
    """A user repeats themselves in one message, in other words than an item already kept: the turn is
    saved (no error, nothing lost), both statements name the kept item, and it is reinforced once."""
    kept = turn(alice, "I live in Berlin")[0].memory
    first, second, other = turn(alice, "I moved to Berlin", "I moved to Berlin", "I like jazz")
    assert (first.decision.verdict, second.decision.verdict) == ("same", "same")
    assert first.memory.pk == second.memory.pk == kept.pk and not first.created and not second.created
    kept.refresh_from_db()
    assert kept.value_json["seenCount"] == 2
    assert other.created and current(alice) == ["I like jazz", "I live in Berlin"]
