"""Memory strategies on stored conversations with tool calls: units stay whole, in one transaction."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryboard.agent.runtime import history_messages
from memoryboard.conversations import memory_apply, memory_plan
from memoryboard.models import AuditLog, ChatMessage

pytestmark = pytest.mark.django_db


def store(kinds: list[str], conversation_id: str = "t1") -> list[ChatMessage]:
    """``kinds``: "u" user, "a" assistant text, a digit k: an assistant row with k calls then k TOOL rows."""
    rows = []
    call = 0

    def add(role, content, metadata=None):
        rows.append(ChatMessage.objects.create(conversation_id=conversation_id, agent_id="chat", user_id="7",
                                               role=role, content=content, metadata=metadata))

    for i, kind in enumerate(kinds):
        if kind == "u":
            add("USER", f"question {i} " + "q" * i)
        elif kind == "a":
            add("ASSISTANT", f"answer {i}")
        else:
            ids = []
            for _ in range(int(kind)):
                call += 1
                ids.append(f"call_{call}")
            add("ASSISTANT", "", {"tool_calls": [{"id": c, "type": "function",
                                                  "function": {"name": "search", "arguments": "{}"}} for c in ids]})
            for c in ids:
                add("TOOL", f"result of {c}", {"tool_call_id": c})
    return rows


def assert_whole(conversation_id: str = "t1") -> None:
    rows = list(ChatMessage.objects.filter(conversation_id=conversation_id).order_by("id"))
    calls = {c["id"] for r in rows if r.metadata and r.role == "ASSISTANT" for c in r.metadata.get("tool_calls", [])}
    results = {r.metadata["tool_call_id"] for r in rows if r.role == "TOOL"}
    assert results == calls, f"orphans: calls {calls - results}, results {results - calls}"
    # Replaying the rows gives the model every unit: nothing is left out.
    replay = history_messages(rows)
    assert len(replay) == len(rows)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kinds=st.lists(st.sampled_from(["u", "a", "1", "2", "3"]), min_size=1, max_size=12),
    choice=st.sampled_from([
        ("trim", {"keep_first": 1, "keep_last": 2}),
        ("trim", {"keep_first": 2, "keep_last": 1}),
        ("delete", {"keep_latest": 3}),
        ("filter", {"keep_roles": ["USER"]}),
        ("filter", {"keep_roles": ["USER"], "keep_tool": True}),
        ("summarize", {"threshold": 3, "keep_last": 2}),
    ]),
)
def test_memory_strategies_keep_units_whole(support_user, kinds, choice):
    ChatMessage.objects.filter(conversation_id="t1").delete()
    store(kinds)
    name, params = choice
    memory_apply(name, conversation_id="t1", params=params, actor=support_user)
    assert_whole()


def test_trim_keeps_the_unit_at_the_boundary(support_user):
    rows = store(["u", "a", "u", "2", "a"])  # u a u A T T a
    plan = memory_plan("trim", conversation_id="t1", params={"keep_first": 1, "keep_last": 2})
    # The last 2 rows would be "T a": the tool unit (A T T) is kept whole.
    assert list(plan.delete_ids) == [rows[1].pk, rows[2].pk]
    memory_apply("trim", conversation_id="t1", params={"keep_first": 1, "keep_last": 2}, actor=support_user)
    assert_whole()


def test_a_failure_rolls_everything_back(support_user, monkeypatch):
    store(["u", "2", "u", "1", "a", "u", "3", "a"])
    before = list(ChatMessage.objects.order_by("id").values_list("id", "content"))

    def broken(**kwargs):
        raise RuntimeError("audit store down")

    monkeypatch.setattr("memoryboard.conversations.audit_record", broken)
    with pytest.raises(RuntimeError):
        memory_apply("delete", conversation_id="t1", params={"keep_latest": 2}, actor=support_user)
    assert list(ChatMessage.objects.order_by("id").values_list("id", "content")) == before
    assert not AuditLog.objects.exists()
