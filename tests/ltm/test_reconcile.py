"""The reconcile step on every write path: decisions, state changes, audit, restore, the judge."""

from __future__ import annotations

import json

import pytest

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.ltm.store.items import memory_restore
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.items import memory_create
from memoryboard.models import AuditLog, LongTermMemory, MemoryStateChange

pytestmark = pytest.mark.django_db


def ns(user, agent="chat"):
    return build_namespace(agent_namespace=agent, user_id=str(user.pk))


def save(user, content, **extra):
    extra.setdefault("memory_type", "FACT")
    return memory_save_reconciled(namespace=ns(user), content=content, agent_id="chat", **extra)


def current(user):
    return sorted(m.content for m in LongTermMemory.objects.filter(namespace=ns(user).as_text(), archived=False))


def test_update_supersedes_the_old_item_keeps_it_and_records_why(alice):
    old = save(alice, "I live in Shanghai").memory
    result = save(alice, "I moved to Berlin", actor=alice)
    assert result.decision.verdict == "update" and result.superseded == [old.pk]
    assert current(alice) == ["I moved to Berlin"]
    old.refresh_from_db()
    assert old.archived and old.archived_reason == "superseded"
    assert old.superseded_by == result.memory.pk and old.valid_to == result.memory.valid_from
    change = MemoryStateChange.objects.get(memory_id=old.pk)
    assert (change.old_state, change.new_state) == ("active", "superseded")
    entry = AuditLog.objects.get(object_id=old.pk, action="archive")
    # The reason says what happened; why (it quotes the statements) is in the entry's after, which an erase empties.
    assert entry.reason == "superseded" and entry.actor == alice
    assert "residence: shanghai → berlin" in entry.after["reconcile"]["reason"]
    created = AuditLog.objects.get(object_id=result.memory.pk, action="create")
    assert created.after["reconcile"]["decision"] == "update" and created.after["reconcile"]["judge"] == "rules"


def test_a_superseded_item_is_restorable_and_current_again(alice, support_user):
    old = save(alice, "I live in Shanghai").memory
    save(alice, "I moved to Berlin")
    old.refresh_from_db()
    restored = memory_restore(memory=old, actor=support_user)
    assert not restored.archived and restored.valid_to is None and restored.superseded_by is None
    assert current(alice) == ["I live in Shanghai", "I moved to Berlin"]


def test_same_reinforces_without_a_new_row(alice):
    first = save(alice, "I live in Berlin").memory
    result = save(alice, "I moved to Berlin", source="mcp", conversation_id="c7")
    assert result.decision.verdict == "same" and not result.created and result.memory.pk == first.pk
    first.refresh_from_db()
    assert LongTermMemory.objects.count() == 1
    assert first.value_json["seenCount"] == 2 and first.value_json["lastSeenAt"]
    assert first.value_json["sources"][-1]["source"] == "mcp"
    assert first.value_json["sources"][-1]["conversationId"] == "c7"
    assert AuditLog.objects.filter(object_id=first.pk, action="update", reason__startswith="reconcile same").exists()


def test_compatible_facts_are_both_kept(alice):
    save(alice, "I live in Shanghai")
    assert save(alice, "I work at Siemens").decision.verdict == "new"
    assert current(alice) == ["I live in Shanghai", "I work at Siemens"]


def test_conflict_keeps_both_current_and_names_each_other(alice):
    old = save(alice, "I live in Shanghai and work at Siemens").memory
    result = save(alice, "I moved to Berlin")
    assert result.decision.verdict == "conflict"
    old.refresh_from_db()
    assert old.conflict_with == [result.memory.pk] and result.memory.conflict_with == [old.pk]
    assert len(current(alice)) == 2
    flagged = AuditLog.objects.get(object_id=old.pk, reason="conflict flagged")  # the other's id: in value_json
    assert flagged.after["value_json"]["conflictWith"] == [result.memory.pk]


def test_other_users_and_agents_are_never_candidates(alice, bob):
    save(bob, "I live in Shanghai")
    memory_save_reconciled(namespace=ns(alice, "quiet"), content="I live in Shanghai", memory_type="FACT",
                           agent_id="quiet")
    assert save(alice, "I moved to Berlin").decision.verdict == "new"
    assert LongTermMemory.objects.filter(archived=False).count() == 3


def test_an_expired_item_is_not_current(alice):
    from datetime import timedelta

    from django.utils import timezone

    old = save(alice, "I live in Berlin").memory
    value = {**old.value_json, "expiresAt": (timezone.now() - timedelta(days=1)).isoformat()}
    LongTermMemory.objects.filter(pk=old.pk).update(value_json=value)
    assert save(alice, "I live in Berlin now").decision.verdict == "new"


def test_an_older_statement_is_stored_superseded_by_the_newer_one(alice):
    from datetime import timedelta

    from django.utils import timezone

    newer = save(alice, "I live in Berlin").memory
    result = save(alice, "I live in Shanghai", observed_at=timezone.now() - timedelta(days=400))
    result.memory.refresh_from_db()
    newer.refresh_from_db()
    assert not newer.archived
    assert result.memory.archived_reason == "superseded" and result.memory.superseded_by == newer.pk


def test_an_edit_is_reconciled_against_the_owners_other_items(alice):
    shanghai = save(alice, "I live in Shanghai").memory
    job = save(alice, "I work as a nurse").memory
    memory_update(memory=job, actor=alice, content="I live in Berlin")
    shanghai.refresh_from_db()
    assert shanghai.archived_reason == "superseded" and shanghai.superseded_by == job.pk
    entry = AuditLog.objects.filter(object_id=job.pk, action="update").latest("id")
    assert entry.after["reconcile"]["decision"] == "update"


def local(**extra):
    """Vectors made here (the hashing embedder), so that only the judge's chat requests reach the fake."""
    from memoryboard.llm.embeddings import HashingEmbedder

    return {"embedder": HashingEmbedder(), **extra}


def test_the_judge_decides_online_on_the_candidates_with_reasoning_first(openai_settings, alice):
    old = save(alice, "User lives in Shanghai", **local()).memory
    openai_settings.push_reply(content=json.dumps(
        {"reasoning": "Both are about where the user lives; the new one replaces it.", "verdict": "update",
         "target_ids": [old.pk]}))
    result = save(alice, "User relocated to Berlin", **local())
    assert result.decision.verdict == "update" and result.superseded == [old.pk]
    assert result.decision.judge.startswith("llm:")
    assert result.decision.reason.startswith("Both are about")
    request = openai_settings.chat_requests()[0]
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert system.index('"reasoning"') < system.index('"verdict"')
    assert "User relocated to Berlin" in user and old.pk in user and "Shanghai" in user


@pytest.mark.parametrize("fault,reason", [("http500", "HTTP 500"), ("timeout", "timeout"),
                                          ("malformed", "malformed response"),
                                          ("empty_choices", "empty response")])
def test_a_failing_judge_falls_back_to_the_rules_and_says_so(openai_settings, alice, fault, reason):
    old = save(alice, "I live in Shanghai", **local()).memory
    openai_settings.push_fault(fault)
    result = save(alice, "I moved to Berlin", **local())
    assert result.decision.verdict == "update" and result.superseded == [old.pk]
    assert result.decision.judge == f"rules (judge failed: {reason})"
    entry = AuditLog.objects.get(object_id=result.memory.pk, action="create")
    assert entry.after["reconcile"]["judge"] == f"rules (judge failed: {reason})"


@pytest.mark.parametrize("answer", [
    "Sure, it is an update.",  # not JSON
    json.dumps({"verdict": "replace", "target_ids": []}),  # unknown verdict
    json.dumps({"reasoning": "x", "verdict": "update", "target_ids": []}),  # names nothing
])
def test_an_unreadable_verdict_falls_back_to_the_rules(openai_settings, alice, answer):
    save(alice, "I live in Shanghai", **local())
    openai_settings.push_reply(content=answer)
    result = save(alice, "I moved to Berlin", **local())
    assert result.decision.judge == "rules (judge failed: malformed response)"
    assert result.decision.verdict == "update"


def test_a_judge_naming_an_id_that_was_no_candidate_is_not_obeyed(openai_settings, alice, bob):
    theirs = save(bob, "I live in Paris", **local()).memory
    save(alice, "I live in Shanghai", **local())
    openai_settings.push_reply(content=json.dumps({"reasoning": "x", "verdict": "update", "target_ids": [theirs.pk]}))
    result = save(alice, "I moved to Berlin", **local())
    assert result.decision.judge == "rules (judge failed: malformed response)"
    theirs.refresh_from_db()
    assert not theirs.archived


def test_the_kept_index_finds_what_a_fresh_build_finds(alice):
    """The reconcile step keeps each namespace's vectors and slots between saves and patches in what was
    written, superseded, edited or deleted since: its candidates are those a fresh build finds."""
    from memoryboard.llm.factory import get_embedder
    from memoryboard.ltm.write.reconcile_scope import forget_scope_indexes, nearest_current
    from memoryboard.ltm.store.items import memory_delete_for_user
    from memoryboard.ltm.write.statements import statement_slots

    embedder = get_embedder()
    texts = ["I live in Shanghai", "I like jazz", "I work at Siemens", "My favourite drink is tea", "我喜欢跑步",
             "I have two cats", "I moved to Berlin", "I no longer like jazz", "我住在上海"]
    saved = [save(alice, text, memory_type="PREFERENCE" if i % 2 else "FACT").memory for i, text in enumerate(texts)]
    memory_update(memory=saved[2], actor=alice, content="I work at Bosch")
    memory_delete_for_user(memory=saved[5], actor=alice)
    save(alice, "My favourite drink is coffee")
    queries = ["I moved to Munich", "I like jazz", "My favourite drink is water", "我喜欢游泳", "cats"]

    def found(query):
        vector = embedder.embed([query])[0]
        slots = {slot.key for slot in statement_slots(query)}
        return nearest_current(namespace=ns(alice), vector=vector, slot_keys=slots, embedder=embedder, count=3)

    kept = [found(query) for query in queries]
    forget_scope_indexes()
    fresh = [found(query) for query in queries]
    # The same items; cosines within the rounding of the stored vectors (vector_cache.compact_vectors).
    assert [[pk for pk, _c in result] for result in kept] == [[pk for pk, _c in result] for result in fresh]
    for a, b in zip(kept, fresh):
        assert [c for _pk, c in a] == pytest.approx([c for _pk, c in b], abs=1e-3)
    current_ids = set(LongTermMemory.objects.filter(archived=False).values_list("pk", flat=True))
    assert {pk for result in fresh for pk, _cosine in result} <= current_ids
    assert saved[5].pk not in {pk for result in kept for pk, _c in result}


def test_an_item_of_the_same_slot_is_compared_however_many_items_are_nearer(alice):
    """Among many items about friends moving to Paris, "I moved to Paris" is nearer to each of them than to
    "I live in London": the item holding the same slot is a candidate all the same, and is superseded. (The
    friends' items are stored as they are: the reconcile step would read "number 3" after "number 2" as news.)"""
    london = save(alice, "I live in London.").memory
    for i in range(24):
        memory_create(namespace=ns(alice), content=f"My friend number {i} moved to Paris.", memory_type="FACT",
                      agent_id="chat")
    result = save(alice, "I moved to Paris.")
    assert len(result.decision.candidates) > 16  # the 16 nearest, and the one about where alice lives
    assert result.decision.verdict == "update" and result.superseded == [london.pk]


