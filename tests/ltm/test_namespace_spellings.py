"""One namespace, many spellings: items written as compact, spaced or \\u-escaped JSON are their owner's on
every read and write path, and never anyone else's (issue 12)."""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from memoryboard.ltm.write.extraction import should_skip_extraction
from memoryboard.ltm.store.lifecycle import memory_enforce_limit
from memoryboard.models.namespaces import (
    agent_prefixes,
    build_namespace,
    canonical_text,
    namespace_belongs_to,
    namespace_spellings,
    parse_namespace,
)
from memoryboard.ltm.search.retrieval import memory_retrieve
from memoryboard.ltm.store.selectors import (
    filter_memories,
    odd_namespace_texts,
    own_memories,
    stored_agent_namespaces,
)
from memoryboard.ltm.write.items import memory_create
from memoryboard.ltm.write.tools import find_duplicate, run_memory_tool
from memoryboard.models import LongTermMemory, PauseRule


def spaced(agent: str, user: str, *, ascii_only=False, upper=False) -> str:
    text = json.dumps([f"agent:{agent}", f"user:{user}", "memories"], ensure_ascii=ascii_only)
    return re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), text) if upper else text


def stored(user_id: str, agent: str, content: str, text: str | None = None, *, memory_type="FACT") -> LongTermMemory:
    """An item as another writer would store it: created (and embedded), then its namespace respelled."""
    memory = memory_create(
        namespace=build_namespace(agent_namespace=agent, user_id=user_id), content=content,
        memory_type=memory_type, agent_id=agent,
    )
    if text is not None:
        LongTermMemory.objects.filter(pk=memory.pk).update(namespace=text)
        memory.refresh_from_db()
    return memory


def test_every_spelling_parses_back_to_its_namespace_and_belongs_only_to_its_owner():
    for agent, user in (("chat", "42"), ("中文/x", "42"), ("chat", "用户")):
        ns = build_namespace(agent_namespace=agent, user_id=user)
        texts = namespace_spellings(ns)
        assert texts[0] == canonical_text(ns) == '["agent:%s","user:%s","memories"]' % (agent, user)
        assert len(texts) == len(set(texts))
        for text in texts:
            assert parse_namespace(text) == ns
            assert namespace_belongs_to(text, user_id=user, agent=agent)
            assert not namespace_belongs_to(text, user_id=user + "0")
            assert not namespace_belongs_to(text, user_id=user, agent=agent + "x")
    assert len(namespace_spellings(build_namespace(agent_namespace="chat", user_id="42"))) == 2
    # Jackson's upper-case escapes, Python's lower-case ones, PHP's escaped slash.
    assert '["agent:\\u4E2D\\u6587\\/x","user:42","memories"]' in namespace_spellings(
        build_namespace(agent_namespace="中文/x", user_id="42"))
    assert namespace_belongs_to('[ "agent:chat" ,\n "user:4\\u0032", "memories" ]', user_id="42", agent="chat")
    assert not namespace_belongs_to('["agent:chat","user:42","other"]', user_id="42")
    assert not namespace_belongs_to("not json", user_id="42")
    assert agent_prefixes("中") == ['["agent:中",', '["agent:\\u4e2d",', '["agent:\\u4E2D",']


@pytest.mark.django_db
def test_own_memories_finds_every_real_writer_spelling_and_nobody_elses():
    mine = {
        stored("42", "chat", "compact").pk,
        stored("42", "chat", "spaced", spaced("chat", "42")).pk,
        stored("42", "中文", "raw cjk agent", spaced("中文", "42")).pk,
        stored("42", "中文", "escaped lower", spaced("中文", "42", ascii_only=True)).pk,
        stored("42", "中文", "escaped upper", spaced("中文", "42", ascii_only=True, upper=True)).pk,
    }
    stored("4", "chat", "user four spaced", spaced("chat", "4"))
    stored("420", "中文", "user 420", spaced("中文", "420", ascii_only=True))
    stored("Bob", "chat", "capital bob spaced", spaced("chat", "Bob"))
    bob = stored("bob", "chat", "small bob spaced", spaced("chat", "bob")).pk
    assert {m.pk for m in own_memories(user_id="42")} == mine
    assert {m.pk for m in own_memories(user_id="bob")} == {bob}
    everything = LongTermMemory.objects.all()
    assert {m.pk for m in filter_memories(everything, user="42", agent="中文")} == mine - {
        m.pk for m in own_memories(user_id="42") if m.agent_namespace == "chat"}
    assert len(filter_memories(everything, agent="中文")) == 4


@pytest.mark.django_db
def test_the_agent_scan_steps_past_escaped_spellings_without_skipping_other_agents():
    stored("1", "中文", "escaped", spaced("中文", "1", ascii_only=True))  # sorts before "chat"
    stored("1", "chat", "plain")
    stored("1", "zeta", "spaced", spaced("zeta", "1"))
    assert sorted(stored_agent_namespaces()) == ["chat", "zeta", "中文"]


@pytest.mark.django_db
def test_agent_paths_see_every_spelling_of_their_namespace(alice):
    uid = str(alice.pk)
    ns = build_namespace(agent_namespace="chat", user_id=uid)
    java = stored(uid, "chat", "I am a Java backend developer", spaced("chat", uid))
    stored(uid, "chat", "I like green tea", spaced("chat", uid, ascii_only=True))
    # Retrieval (the agent turn) and the memory_search tool.
    assert java.pk in {i.memory.pk for i in memory_retrieve(namespace=ns, query="Java developer", k=5)}
    found = run_memory_tool(name="memory_search", arguments={"query": "Java"}, namespace=ns, agent_id="chat")
    assert java.pk in {r["id"] for r in found["results"]}
    # The tool's dedup sees the spaced item: no second copy is saved.
    assert find_duplicate(ns, "java backend developer") == java.pk
    saved = run_memory_tool(name="memory_save", arguments={"content": "Java backend developer"}, namespace=ns,
                            agent_id="chat")
    assert saved == {"saved": False, "duplicate_of": java.pk}
    # Extraction's "nothing new" check knows the spaced item.
    from memoryboard.agents_config import get_agents_config

    skip = should_skip_extraction(user_message="I am a Java backend developer.", conversation=[],
                                  agent_config=get_agents_config().get("chat"), user_id=uid)
    assert skip and "new" in skip
    # A pause rule for the agent covers the spaced item too.
    PauseRule.objects.create(user_id=uid, agent_namespace="chat", memory_type="FACT")
    assert memory_retrieve(namespace=ns, query="Java developer", k=5) == []


@pytest.mark.django_db
def test_the_item_limit_counts_every_spelling():
    ns = build_namespace(agent_namespace="chat", user_id="9")
    for i, text in enumerate([None, spaced("chat", "9"), None, spaced("chat", "9")]):
        stored("9", "chat", f"fact number {i}", text)
    archived = memory_enforce_limit(namespace=ns, max_items=2)
    assert len(archived) == 2
    assert own_memories(user_id="9").filter(archived=False).count() == 2


@pytest.mark.django_db
def test_end_user_views_list_search_export_and_delete_all_in_every_spelling(alice, bob, client):
    uid = str(alice.pk)
    items = {
        stored(uid, "chat", "I am a Java developer", spaced("chat", uid)).pk,
        stored(uid, "中文", "我喜欢喝茶", spaced("中文", uid, ascii_only=True, upper=True)).pk,
        stored(uid, "coder", "I use vim").pk,
    }
    other = stored(str(bob.pk), "chat", "bob's Java secret", spaced("chat", str(bob.pk))).pk
    api = APIClient()
    api.force_login(alice)
    listed = {row["id"] for row in api.get("/api/v1/memories/?limit=50").json()["results"]}
    assert listed == items
    found = {row["id"] for row in api.get("/api/v1/memories/search/?q=Java&k=10").json()}
    assert found & items and other not in found
    client.force_login(alice)
    page = client.get(reverse("my-memories")).content.decode()
    assert "我喜欢喝茶" in page and "I am a Java developer" in page and "secret" not in page
    exported = {m["id"] for m in json.loads(client.get(reverse("my-memories-export")).content)["memories"]}
    assert exported == items
    response = client.post(reverse("my-memories-bulk"), {"action": "delete", "scope": "filter", "confirm": "1"})
    assert response.status_code == 302
    assert not own_memories(user_id=uid).filter(archived=False).exists()
    assert LongTermMemory.objects.get(pk=other).archived is False


@pytest.mark.django_db
def test_writes_use_the_configured_spelling(settings):
    settings.MEMORYBOARD_NAMESPACE_SPELLING = "spaced-ascii"
    memory = stored("5", "中文", "written spaced and escaped")
    assert memory.namespace == '["agent:\\u4e2d\\u6587", "user:5", "memories"]'
    assert [m.pk for m in own_memories(user_id="5")] == [memory.pk]


@pytest.mark.django_db
def test_odd_spellings_are_listed_and_respelled_on_apply(capsys):
    odd_text = '[ "agent:chat" , "user:6" , "memories" ]'
    odd = stored("6", "chat", "odd spacing", odd_text)
    normal = stored("6", "chat", "normal", spaced("chat", "6"))
    assert [text for text, _ns in odd_namespace_texts()] == [odd_text]
    assert odd.pk not in {m.pk for m in own_memories(user_id="6")}
    call_command("respell_namespaces")
    assert "Dry run" in capsys.readouterr().out
    assert LongTermMemory.objects.get(pk=odd.pk).namespace == odd_text
    call_command("respell_namespaces", "--apply")
    assert LongTermMemory.objects.get(pk=odd.pk).namespace == '["agent:chat","user:6","memories"]'
    assert LongTermMemory.objects.get(pk=normal.pk).namespace == spaced("chat", "6")  # left as written
    assert odd_namespace_texts() == []


@pytest.mark.django_db
def test_staff_views_find_every_spelling(support_user, alice, client):
    uid = str(alice.pk)
    items = {
        stored(uid, "chat", "compact written").pk,
        stored(uid, "chat", "spaced written", spaced("chat", uid)).pk,
        stored(uid, "中文", "escaped written", spaced("中文", uid, ascii_only=True, upper=True)).pk,
    }
    stored("9" + uid, "chat", "someone else", spaced("chat", "9" + uid))
    client.force_login(support_user)
    page = client.get(reverse("admin:memoryboard_longtermmemory_changelist"), {"user": uid}).content.decode()
    assert all(text in page for text in ("compact written", "spaced written", "escaped written"))
    assert "someone else" not in page
    page = client.get(reverse("admin:memoryboard_longtermmemory_changelist"), {"agent": "中文"}).content.decode()
    assert "escaped written" in page and "spaced written" not in page
    api = APIClient()
    api.force_login(support_user)
    assert {row["id"] for row in api.get(f"/api/v1/memories/?user={uid}&limit=50").json()["results"]} == items
    found = api.get(f"/api/v1/memories/search/?q=written&k=10&user={uid}").json()
    assert {row["id"] for row in found} == items


@pytest.mark.django_db
def test_cleanup_archives_a_spaced_item_and_its_owner_sees_why(alice, client):
    from memoryboard.ltm.store.lifecycle import memory_cleanup

    uid = str(alice.pk)
    weak = stored(uid, "chat", "rarely used spaced fact", spaced("chat", uid))
    LongTermMemory.objects.filter(pk=weak.pk).update(relevance_score=0.01)
    assert memory_cleanup(dry_run=False) == [weak.pk]
    client.force_login(alice)
    page = client.get(reverse("my-memories")).content.decode()
    assert "rarely used spaced fact" in page and 'data-reason="decay"' in page


def test_an_unknown_spelling_setting_fails_the_system_check(settings):
    from memoryboard.checks import check_namespace_spelling

    assert check_namespace_spelling() == []
    settings.MEMORYBOARD_NAMESPACE_SPELLING = "pretty"
    errors = check_namespace_spelling()
    assert [e.id for e in errors] == ["memoryboard.E003"] and "compact" in errors[0].hint
