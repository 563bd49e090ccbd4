"""Channel B: the memory tools. Namespace isolation, dedup, the user's switch, the item limit."""

from __future__ import annotations

import pytest

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.tools import MEMORY_TOOLS, run_memory_tool
from memoryboard.models import LongTermMemory, MemoryAccess, UserMemorySettings

pytestmark = pytest.mark.django_db

HOSTILE = {
    "_userId": "999", "userId": "999", "_namespace": '["agent:chat","user:999","memories"]',
    "namespace": ["agent:chat", "user:999", "memories"], "user_id": "999", "agent": "other",
}


def ns(user, agent="chat"):
    return build_namespace(agent_namespace=agent, user_id=str(user.pk))


def save(user, content, memory_type="FACT", **extra):
    return run_memory_tool(name="memory_save", arguments={"content": content, "type": memory_type, **extra},
                           namespace=ns(user), agent_id="chat", conversation_id="c1")


def test_tool_definitions_are_openai_functions():
    names = [tool["function"]["name"] for tool in MEMORY_TOOLS]
    assert names == ["memory_save", "memory_search"]
    save_params = MEMORY_TOOLS[0]["function"]["parameters"]
    assert save_params["properties"]["type"]["enum"] == ["FACT", "PREFERENCE", "PROCEDURE", "EPISODE"]
    assert all(tool["type"] == "function" for tool in MEMORY_TOOLS)


def test_save_writes_to_the_servers_namespace_whatever_the_arguments(alice, bob):
    result = save(alice, "User is a Rust developer", **HOSTILE, **{"bob": str(bob.pk)})
    assert result["saved"] is True
    memory = LongTermMemory.objects.get(pk=result["id"])
    assert memory.namespace == ns(alice).as_text()
    assert memory.source == "agent_tool" and memory.memory_type == "FACT" and memory.agent_id == "chat"
    assert not LongTermMemory.objects.filter(namespace__contains="user:999").exists()


def test_search_reads_only_the_servers_namespace_whatever_the_arguments(alice, bob, make_memory):
    make_memory(bob, "Bob's secret: the vault code is 4321")
    for arguments in ({"query": "vault code", **HOSTILE, "_userId": str(bob.pk), "userId": str(bob.pk),
                       "namespace": ns(bob).as_list(), "_namespace": ns(bob).as_text()},):
        result = run_memory_tool(name="memory_search", arguments=arguments, namespace=ns(alice), agent_id="chat")
        assert result == {"results": []}
    mine = make_memory(alice, "Alice keeps the vault code in a notebook")
    result = run_memory_tool(name="memory_search", arguments={"query": "vault code", "k": 3}, namespace=ns(alice),
                             agent_id="chat", conversation_id="c9")
    assert [r["id"] for r in result["results"]] == [mine.pk]
    assert MemoryAccess.objects.filter(memory_id=mine.pk, kind="tool_search", conversation_id="c9").count() == 1


@pytest.mark.parametrize("existing,new", [
    ("User is a Rust developer", "user is a rust developer."),       # same, case and punctuation
    ("User is a Rust developer at Acme", "User is a Rust developer"),  # contained in the old
    ("用户喜欢喝茶", "用户喜欢喝茶，尤其是绿茶"),                        # contains the old
])
def test_substring_dedup(alice, existing, new):
    first = save(alice, existing)
    second = save(alice, new)
    assert second == {"saved": False, "duplicate_of": first["id"]}
    assert LongTermMemory.objects.count() == 1


def test_archived_item_does_not_block_a_new_save(alice, make_memory):
    old = make_memory(alice, "User is a Rust developer", archived_reason="user_deleted")
    result = save(alice, "User is a Rust developer")
    assert result["saved"] is True and result["id"] != old.pk
    assert save(alice, "User is a Rust developer")["duplicate_of"] == result["id"]


def test_save_switch_off_saves_nothing(alice):
    UserMemorySettings.objects.create(user_id=str(alice.pk), save_memories=False)
    result = save(alice, "User is a Rust developer")
    assert result["saved"] is False and "turned off" in result["reason"]
    assert LongTermMemory.objects.count() == 0


def test_bad_arguments_are_reported_to_the_model(alice):
    assert save(alice, "")["field"] == "content"
    assert save(alice, "x", memory_type="GOSSIP")["field"] == "type"
    assert run_memory_tool(name="memory_search", arguments={"query": 3}, namespace=ns(alice), agent_id="chat")["field"] == "query"
    assert "unknown tool" in run_memory_tool(name="rm_rf", arguments={}, namespace=ns(alice), agent_id="chat")["error"]
    assert LongTermMemory.objects.count() == 0


def test_save_enforces_the_agents_item_limit(alice, make_memory, settings, tmp_path):
    from memoryboard.agents_config import reset_agents_config

    path = tmp_path / "agents.yaml"
    path.write_text("agent:\n  agents:\n    chat: {memory-tools: true, long-term-memory: {enabled: true, namespace: chat, max-items: 2}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    try:
        low = make_memory(alice, "User once visited Paris", memory_type="EPISODE")
        LongTermMemory.objects.filter(pk=low.pk).update(relevance_score=0.2)
        make_memory(alice, "User has two cats")
        result = save(alice, "User is a Rust developer")
        assert result["saved"] is True and result["archived_over_limit"] == [low.pk]
        low.refresh_from_db()
        assert low.archived and low.archived_reason == "over_limit"
        assert LongTermMemory.objects.filter(archived=False).count() == 2
    finally:
        reset_agents_config()


def test_a_busy_namespace_is_reported_not_raised(alice, monkeypatch):
    from contextlib import contextmanager

    from memoryboard.ltm.write import tools
    from memoryboard.ltm.store.locks import NamespaceLockTimeout

    @contextmanager
    def busy(namespace):
        raise NamespaceLockTimeout("x")
        yield

    monkeypatch.setattr(tools, "namespace_lock", busy)
    assert save(alice, "User is a Rust developer") == {"saved": False, "error": "memory is busy, try again"}


def test_embedding_endpoint_down_is_a_tool_result_and_nothing_is_half_written(openai_settings, alice):
    openai_settings.push_fault("http500")  # the save's embedding
    result = save(alice, "User is a Go developer")
    assert result == {"error": "long-term memory is unavailable (HTTP 500)"}
    assert not LongTermMemory.objects.exists()
    assert save(alice, "User is a Go developer")["saved"] is True
    openai_settings.push_fault("http500")
    result = run_memory_tool(name="memory_search", arguments={"query": "Go"}, namespace=ns(alice), agent_id="chat")
    assert result == {"error": "long-term memory is unavailable (HTTP 500)"}
