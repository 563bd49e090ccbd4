from __future__ import annotations

import pytest

from memoryboard.strategies import (
    MEMORY_SUMMARY_INSTRUCTION,
    MEMORY_SUMMARY_PREFIX,
    FilterRules,
    Message,
    Role,
    StrategyConfigError,
    StrategyInputError,
    plan_delete,
    plan_filter,
    plan_memory,
    plan_summarize,
    plan_trim,
)

from .helpers import FailingSummarizer, RecordingSummarizer, numbered


def test_delete_design_example():
    rows = numbered(8, ids=True)  # m1..m8 with ids 1..8
    plan = plan_delete(rows, keep_latest=5)
    assert plan.delete_ids == (1, 2, 3)
    assert plan.keep_ids == (4, 5, 6, 7, 8)
    assert plan.inserts == () and plan.llm_calls == 0 and plan.fallback is None


def test_delete_keep_more_than_rows_deletes_nothing():
    assert plan_delete(numbered(3, ids=True), keep_latest=50).is_empty


def test_memory_trim():
    plan = plan_trim(numbered(10, ids=True), keep_first=2, keep_last=3)
    assert plan.delete_ids == (3, 4, 5, 6, 7)
    assert plan.keep_ids == (1, 2, 8, 9, 10)


def test_memory_strategies_need_ids():
    with pytest.raises(StrategyInputError) as err:
        plan_delete([Message(Role.USER, "a", 1), Message(Role.USER, "b")], keep_latest=1)
    assert err.value.field == "messages[1].id"


def test_memory_summarize_plan():
    rows = numbered(25, start=101, ids=True)
    fake = RecordingSummarizer("likes tea")
    plan = plan_summarize(rows, threshold=20, keep_last=6, summarizer=fake)
    assert fake.calls[0][1] == MEMORY_SUMMARY_INSTRUCTION
    (row,) = plan.inserts
    assert MEMORY_SUMMARY_PREFIX == "[持久化记忆摘要] "
    assert row.content == "[持久化记忆摘要] likes tea"
    assert row.role is Role.SYSTEM
    assert row.id == 101  # the smallest deleted id, so the summary sorts in place
    assert row.metadata == {"summary": True, "summarized_ids": tuple(range(101, 120))}
    assert plan.delete_ids == tuple(range(101, 120))
    assert plan.keep_ids == tuple(range(120, 126))
    assert plan.llm_calls == 1 and plan.fallback is None
    data = plan.to_dict()
    assert data["inserts"][0]["metadata"]["summarized_ids"] == list(range(101, 120))
    assert data["inserts"][0]["id"] == 101


def test_memory_summarize_below_threshold_is_empty():
    fake = RecordingSummarizer()
    plan = plan_summarize(numbered(20, ids=True), threshold=20, keep_last=6, summarizer=fake)
    assert plan.is_empty and fake.calls == [] and plan.llm_calls == 0


def test_memory_summarize_failure_deletes_nothing():
    rows = numbered(30, ids=True)
    plan = plan_summarize(rows, threshold=20, keep_last=6, summarizer=FailingSummarizer())
    assert plan.is_empty
    assert plan.keep_ids == tuple(range(1, 31))
    assert plan.llm_calls == 1
    assert plan.fallback == "summarizer failed: timeout; nothing deleted"
    assert plan.tokens_after == plan.tokens_before


def test_filter_with_callable():
    rows = [Message(Role.USER, "q", 1), Message(Role.TOOL, "out", 2), Message(Role.ASSISTANT, "a", 3)]
    plan = plan_filter(rows, predicate=lambda m: m.role is not Role.TOOL)
    assert plan.delete_ids == (2,) and plan.keep_ids == (1, 3)


def test_filter_rules_default_keeps_system_user_and_assistant_replies():
    rows = [
        Message(Role.SYSTEM, "sys", 1),
        Message(Role.USER, "hello", 2),
        Message(Role.ASSISTANT, "small talk", 3),
        Message(Role.ASSISTANT, "Your DEADLINE is Friday", 4),
        Message(Role.TOOL, "{}", 5),
    ]
    assert plan_filter(rows, predicate=FilterRules()).delete_ids == (5,)  # only the tool message
    rules = FilterRules(keep_roles=("SYSTEM", "USER"), assistant_keywords=("deadline",), keep_tool=True)
    assert plan_filter(rows, predicate=rules).delete_ids == (3,)
    assert plan_filter(rows, predicate=FilterRules(keep_roles=("SYSTEM", "USER"), min_length=4)).delete_ids == (1, 3, 4, 5)


def test_plan_memory_filter_from_json():
    rows = numbered(4, ids=True)  # USER 1, ASSISTANT 2, USER 3, ASSISTANT 4
    plan = plan_memory("FILTER", rows, {"keep_roles": ["assistant"]})
    assert plan.delete_ids == (1, 3)
    with pytest.raises(StrategyConfigError) as err:
        plan_memory("filter", rows, {"keep_roles": ["robot"]})
    assert err.value.field == "keep_roles[0]"
    with pytest.raises(StrategyConfigError) as err:
        plan_memory("filter", rows, {"predicate": "lambda m: True"})
    assert err.value.field == "predicate"


def test_plan_memory_by_name():
    rows = numbered(8, ids=True)
    assert plan_memory("delete", rows, {"keep_latest": 5}).delete_ids == (1, 2, 3)
    assert plan_memory("Trim", rows, {"keep_first": 1, "keep_last": 1}).delete_ids == (2, 3, 4, 5, 6, 7)
    assert plan_memory("filter", rows, predicate=lambda m: m.id > 6).delete_ids == (1, 2, 3, 4, 5, 6)
    summary = plan_memory("summarize", numbered(30, ids=True))  # offline summarizer by default
    assert summary.inserts[0].content.startswith(MEMORY_SUMMARY_PREFIX)
    with pytest.raises(StrategyConfigError) as err:
        plan_memory("sliding_window", rows)
    assert err.value.field == "name"


def test_memory_plan_to_dict_shape():
    data = plan_delete(numbered(8, ids=True), keep_latest=5).to_dict()
    assert data == {
        "strategy": "DELETE", "delete_ids": [1, 2, 3], "inserts": [], "keep_ids": [4, 5, 6, 7, 8],
        "llm_calls": 0, "fallback": None, "tokens_before": data["tokens_before"],
        "tokens_after": data["tokens_after"], "saved_ratio": data["saved_ratio"],
    }
    assert data["tokens_after"] < data["tokens_before"]
