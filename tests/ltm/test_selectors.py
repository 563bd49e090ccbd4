"""User scoping of memory reads: exact, indexed, and aware of agents found in the table."""

from __future__ import annotations

import pytest
from django.test.utils import CaptureQueriesContext
from django.db import connection

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.store.selectors import filter_memories, own_memories, stored_agent_namespaces
from memoryboard.ltm.write.items import memory_create
from memoryboard.models import LongTermMemory


def save(user_id: str, agent: str, content: str) -> LongTermMemory:
    return memory_create(
        namespace=build_namespace(agent_namespace=agent, user_id=user_id),
        content=content, memory_type="FACT", agent_id=agent,
    )


@pytest.mark.django_db
def test_own_memories_is_exact_per_user_id():
    mine = save("4", "chat", "user four")
    save("42", "chat", "user forty-two")
    save("Bob", "chat", "capital bob")
    bob = save("bob", "chat", "small bob")
    assert [m.pk for m in own_memories(user_id="4")] == [mine.pk]
    assert [m.pk for m in own_memories(user_id="bob")] == [bob.pk]


@pytest.mark.django_db
def test_an_agent_unknown_to_the_config_is_found_in_the_table_even_after_caching():
    save("7", "chat", "configured agent")
    assert stored_agent_namespaces() == ["chat"]  # now cached
    late = save("7", "travel", "agent that only the table knows")
    assert late.pk in {m.pk for m in own_memories(user_id="7")}
    assert {m.pk for m in filter_memories(LongTermMemory.objects.all(), user="7", agent="travel")} == {late.pk}


@pytest.mark.django_db
def test_user_scope_is_an_indexed_in_list_not_a_bare_suffix_scan():
    save("7", "chat", "x")
    with CaptureQueriesContext(connection) as ctx:
        list(own_memories(user_id="7"))
    sql = ctx.captured_queries[-1]["sql"]
    assert " IN (" in sql
