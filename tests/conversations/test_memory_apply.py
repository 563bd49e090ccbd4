"""Memory strategies applied to stored conversations: one transaction, audited, nothing half-written."""

from __future__ import annotations

import pytest

from memoryboard.conversations import (
    ConversationNotFound,
    StalePlanError,
    context_apply,
    memory_apply,
    memory_plan,
)
from memoryboard.models import AuditLog, ChatMessage
from memoryboard.strategies import MEMORY_SUMMARY_PREFIX, StrategyConfigError


def make_conversation(n: int = 8, conversation_id: str = "c1") -> list[ChatMessage]:
    roles = ["USER", "ASSISTANT"]
    return [
        ChatMessage.objects.create(
            conversation_id=conversation_id, agent_id="chat", user_id="7",
            role=roles[i % 2], content=f"m{i + 1} " + "text " * (i + 1),
        )
        for i in range(n)
    ]


def contents(conversation_id: str = "c1") -> list[str]:
    return list(ChatMessage.objects.filter(conversation_id=conversation_id).order_by("id").values_list("content", flat=True))


@pytest.mark.django_db
def test_delete_plan_is_a_dry_run_and_apply_keeps_the_newest(support_user):
    rows = make_conversation(8)
    plan = memory_plan("delete", conversation_id="c1", params={"keep_latest": 5})
    assert list(plan.delete_ids) == [r.pk for r in rows[:3]]
    assert ChatMessage.objects.count() == 8, "a plan writes nothing"

    memory_apply("DELETE", conversation_id="c1", params={"keep_latest": 5}, actor=support_user)

    assert [c.split()[0] for c in contents()] == ["m4", "m5", "m6", "m7", "m8"]
    entry = AuditLog.objects.get(action=AuditLog.Action.APPLY_STRATEGY)
    assert entry.object_id == "c1" and entry.actor == support_user
    assert [d["content"].split()[0] for d in entry.before["deleted"]] == ["m1", "m2", "m3"]


@pytest.mark.django_db
def test_summarize_replaces_the_old_rows_in_place_with_the_prefixed_summary(support_user):
    rows = make_conversation(30)
    memory_apply("summarize", conversation_id="c1", params={"threshold": 10, "keep_last": 4}, actor=support_user)
    stored = list(ChatMessage.objects.filter(conversation_id="c1").order_by("id"))
    assert len(stored) == 5
    assert stored[0].pk == rows[0].pk, "the summary takes the first replaced row's place"
    assert stored[0].role == "SYSTEM" and stored[0].content.startswith(MEMORY_SUMMARY_PREFIX)
    assert [m.content.split()[0] for m in stored[1:]] == ["m27", "m28", "m29", "m30"]


@pytest.mark.django_db
def test_a_failure_half_way_leaves_the_table_as_it_was(support_user, monkeypatch):
    make_conversation(30)
    before = contents()

    def broken_create(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(ChatMessage.objects, "create", broken_create)
    with pytest.raises(RuntimeError):
        memory_apply("summarize", conversation_id="c1", params={"threshold": 10, "keep_last": 4}, actor=support_user)
    monkeypatch.undo()
    assert contents() == before
    assert not AuditLog.objects.filter(action=AuditLog.Action.APPLY_STRATEGY).exists()


@pytest.mark.django_db
def test_a_stale_plan_is_refused(support_user):
    rows = make_conversation(8)
    shown = memory_plan("delete", conversation_id="c1", params={"keep_latest": 5}).delete_ids
    ChatMessage.objects.filter(pk=rows[0].pk).delete()  # someone else changed the conversation
    with pytest.raises(StalePlanError):
        memory_apply("delete", conversation_id="c1", params={"keep_latest": 5}, actor=support_user,
                     expected_delete_ids=shown)
    assert ChatMessage.objects.count() == 7


@pytest.mark.django_db
def test_filter_rules_from_json_delete_what_they_do_not_keep(support_user):
    ChatMessage.objects.create(conversation_id="c1", agent_id="a", user_id="1", role="USER", content="question")
    ChatMessage.objects.create(conversation_id="c1", agent_id="a", user_id="1", role="ASSISTANT", content="chit chat")
    ChatMessage.objects.create(conversation_id="c1", agent_id="a", user_id="1", role="ASSISTANT", content="the deploy key is X")
    ChatMessage.objects.create(conversation_id="c1", agent_id="a", user_id="1", role="TOOL", content="{}")
    memory_apply("filter", conversation_id="c1",
                 params={"keep_roles": ["user"], "assistant_keywords": ["deploy"]}, actor=support_user)
    assert contents() == ["question", "the deploy key is X"]


@pytest.mark.django_db
def test_unknown_conversation_and_bad_params_are_clear_errors(support_user):
    with pytest.raises(ConversationNotFound):
        memory_plan("delete", conversation_id="nope")
    make_conversation(3)
    with pytest.raises(StrategyConfigError) as err:
        memory_apply("delete", conversation_id="c1", params={"keep_latest": -1}, actor=support_user)
    assert "keep_latest" in err.value.field
    assert ChatMessage.objects.count() == 3


def test_context_apply_uses_the_configured_summarizer_through_the_real_client(openai_settings):
    openai_settings.push_reply(content="SUMMARY-FROM-LLM")
    messages = [{"role": "user", "content": f"message {i}"} for i in range(30)]
    result = context_apply("summarize", messages, {"threshold": 10, "keep_last": 3})
    assert result.messages[0].content == "SUMMARY-FROM-LLM"
    assert result.llm_calls == 1 and result.fallback is None
    assert len(openai_settings.chat_requests()) == 1


def test_context_apply_falls_back_when_the_llm_times_out(openai_settings):
    openai_settings.push_fault("timeout")
    messages = [{"role": "user", "content": f"message {i}"} for i in range(30)]
    result = context_apply("summarize", messages, {"threshold": 10, "keep_last": 3})
    assert [m.content for m in result.messages] == ["message 0", "message 1", "message 2"]
    assert result.fallback and "timeout" in result.fallback
