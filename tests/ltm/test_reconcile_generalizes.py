"""The reconcile step on words its rules never listed: a repeat in the other language, a third-person API
create, approvals in review, and a judge that names every candidate."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from memoryboard.agents_config import reset_agents_config
from memoryboard.ltm.write.items import memory_create
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.ltm.write.review import conflict_pairs, memory_review_approve
from memoryboard.models import LongTermMemory, MemoryStateChange, MemoryVersion
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db


def ns(user, agent="chat"):
    return build_namespace(agent_namespace=agent, user_id=str(user.pk))


def save(user, content, **extra):
    extra.setdefault("memory_type", "FACT")
    return memory_save_reconciled(namespace=ns(user), content=content, agent_id="chat", **extra)


def current(user, agent="chat"):
    return sorted(m.content for m in LongTermMemory.objects.filter(namespace=ns(user, agent).as_text(), archived=False))


def save_as_update(user, first, later):
    """Save ``first`` then ``later``, asserting ``later`` replaced ``first`` and alone is current."""
    old = save(user, first).memory
    result = save(user, later)
    assert result.decision.verdict == "update", result.decision.reason
    assert result.superseded == [old.pk] and current(user) == [later]
    return result


def save_as_kept(user, first, later):
    """Save ``first`` then ``later``, asserting ``later`` replaced nothing and ``first`` is still current.
    Returns the second save's result."""
    old = save(user, first).memory
    result = save(user, later)
    assert not result.superseded, result.decision.reason
    old.refresh_from_db()
    assert not old.archived
    return result


def save_as_new(user, first, later):
    """Save ``first`` then ``later``, asserting ``later`` is one more fact: nothing replaced, both current."""
    save(user, first)
    result = save(user, later)
    assert result.decision.verdict == "new", result.decision.reason
    assert not result.superseded and current(user) == sorted([first, later])
    return result


def save_as_repeat(user, first, again):
    """Save ``first`` then ``again``, asserting ``again`` was taken for the same fact: ``first``'s item
    reinforced and alone current. Returns that item and the second save's result."""
    old = save(user, first).memory
    result = save(user, again)
    assert result.decision.verdict == "same", result.decision.reason
    assert result.memory.pk == old.pk and current(user) == [first]
    return old, result


@pytest.mark.parametrize("first,again", [
    ("I live in Shanghai.", "我住在上海。"),
    ("我是护士。", "I am a nurse."),
])
def test_a_repeat_in_the_other_language_is_the_same_fact(alice, use_embedder, first, again):
    old, result = save_as_repeat(alice, first, again)
    assert not result.created and not result.superseded
    # The timeline shows no change: one version (its creation), no state change, reinforced once.
    assert list(MemoryVersion.objects.filter(memory_id=old.pk).values_list("event", flat=True)) == ["create"]
    assert not MemoryStateChange.objects.filter(memory_id=old.pk).exists()
    old.refresh_from_db()
    assert old.value_json["seenCount"] == 2 and old.valid_to is None


def test_a_third_person_api_create_supersedes_the_older_third_person_fact(alice, use_embedder):
    client = APIClient()
    client.force_authenticate(alice)
    old = client.post("/api/v1/memories/", {"content": "The user lives in Graz.", "agent": "chat"}, format="json")
    assert old.status_code == 201, old.content
    new = client.post("/api/v1/memories/", {"content": "The user moved to Ghent and lives there now.",
                                            "agent": "chat"}, format="json")
    assert new.status_code == 201, new.content
    assert new.json()["decision"] == "update" and new.json()["superseded"] == [old.json()["id"]]
    stale = client.get(f"/api/v1/memories/{old.json()['id']}/").json()
    assert stale["state"] == "superseded" and stale["superseded_by"] == new.json()["id"]
    assert current(alice) == ["The user moved to Ghent and lives there now."]


REVIEW_AGENTS = """
agent:
  agents:
    chat: {memory-tools: true, long-term-memory: {enabled: true, namespace: chat, memory-review: all}}
"""


@pytest.fixture
def review_all(settings, tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(REVIEW_AGENTS)
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield
    reset_agents_config()


def pending(user, content):
    item = memory_create(namespace=ns(user), content=content, memory_type="FACT", agent_id="chat",
                         source="agent_tool")
    assert item.archived and item.archived_reason == "pending_review"
    return item


def test_approving_two_contradictory_items_leaves_one_current(alice, use_embedder, review_all):
    graz = pending(alice, "I live in Graz.")
    ghent = pending(alice, "I moved to Ghent, I live in Ghent now.")
    assert sorted(memory_review_approve(memories=[graz, ghent], actor=alice)) == sorted([graz.pk, ghent.pk])
    assert current(alice) == ["I moved to Ghent, I live in Ghent now."]
    graz.refresh_from_db()
    assert graz.archived_reason == "superseded" and graz.superseded_by == ghent.pk


def test_approving_two_identical_pending_items_keeps_one(alice, use_embedder, review_all):
    first = pending(alice, "I am allergic to peanuts.")
    second = pending(alice, "I am allergic to peanuts.")
    memory_review_approve(memories=[first, second], actor=alice)
    assert current(alice) == ["I am allergic to peanuts."]


def local(**extra):
    """Vectors made here (the hashing embedder), so that only the judge's chat requests reach the fake."""
    from memoryboard.llm.embeddings import HashingEmbedder

    return {"embedder": HashingEmbedder(), **extra}


def test_a_judge_naming_every_candidate_supersedes_only_the_same_attribute(openai_settings, alice):
    unrelated = ["I have two cats.", "I am allergic to peanuts.", "I play the piano.", "I work at Siemens."]
    home, *others = [memory_create(namespace=ns(alice), content=text, memory_type="FACT", agent_id="chat", **local())
                     for text in ["I live in Graz.", *unrelated]]
    named = [home.pk] + [m.pk for m in others]
    openai_settings.push_reply(content=json.dumps(
        {"reasoning": "All of these are replaced.", "verdict": "update", "target_ids": named}))
    result = save(alice, "I moved to Ghent.", **local())
    assert len(openai_settings.chat_requests()) == 1
    shown = openai_settings.chat_requests()[0]["messages"][1]["content"]
    assert all(pk in shown for pk in named)  # the judge saw them all and named them all
    assert result.decision.verdict == "update" and result.decision.judge.startswith("llm:")
    assert result.superseded == [home.pk]
    assert current(alice) == sorted(["I moved to Ghent.", *unrelated])
    # The rest goes to the review queue as conflicts with the new item.
    assert sorted(result.conflicts) == sorted(m.pk for m in others)
    pairs = {(p.new.pk, p.old.pk) for p in conflict_pairs(LongTermMemory.objects.all())}
    assert pairs == {(result.memory.pk, m.pk) for m in others}
