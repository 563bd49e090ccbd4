"""The offline reconcile rules: first-person slot statements in English and Chinese."""

from __future__ import annotations

import pytest

from memoryboard.ltm.write.statements import Slot, rules_decide, statement_slots

@pytest.mark.parametrize("text,slot", [
    ("I live in Shanghai.", Slot("residence", "shanghai")),
    ("Actually I moved to Berlin last month, I live in Berlin now.", Slot("residence", "berlin")),
    ("I'm based in New York", Slot("residence", "new york")),
    ("I work as a Java backend developer.", Slot("job", "java backend developer")),
    ("I quit Java, I am a Rust developer now.", Slot("job", "rust developer")),
    ("I work at Google", Slot("workplace", "google")),
    ("My name is Bob", Slot("name", "bob")),
    ("My favourite drink is green tea.", Slot("preferred:drink", "green tea")),
    ("I no longer like coffee", Slot("likes:coffee", "", False)),
    ("I switched to tea", Slot("preferred:drink", "tea")),
    ("我住在上海", Slot("residence", "上海")),
    ("我上个月搬到北京了", Slot("residence", "北京")),
    ("我是一名Java后端工程师", Slot("job", "java后端工程师")),
    ("我转行做产品经理了", Slot("job", "产品经理")),
    ("我在腾讯工作", Slot("workplace", "腾讯")),
    ("我叫小明", Slot("name", "小明")),
    ("我最喜欢的饮料是绿茶", Slot("preferred:drink", "绿茶")),
    ("我不再喜欢喝咖啡了", Slot("likes:咖啡", "", False)),
    ("我喜欢喝绿茶", Slot("likes:绿茶", "")),
    # An adverb of "still" or "now" between the subject and the verb, or before 是, is not part of the slot.
    ("我依然在腾讯上班", Slot("workplace", "腾讯")),
    ("我目前还是在腾讯工作", Slot("workplace", "腾讯")),
    ("我还是住在北京", Slot("residence", "北京")),
    ("我最喜欢的菜系还是泰国菜", Slot("preferred:菜系", "泰国菜")),
    ("我最喜欢的菜系现在是粤菜", Slot("preferred:菜系", "粤菜")),
    ("我最爱的饮料是咖啡", Slot("preferred:drink", "咖啡")),
    ("I'm from Glasgow originally but live in Edinburgh now", Slot("residence", "edinburgh")),
])
def test_slots(text, slot):
    assert slot in statement_slots(text)


def test_no_slot_in_other_statements():
    assert statement_slots("The weather is nice today") == []
    assert statement_slots("今天天气不错") == []


@pytest.mark.parametrize("new,old,verdict", [
    ("I moved to Berlin", "I live in Shanghai", "update"),
    ("我搬到北京了", "我住在上海", "update"),
    ("I am a Rust developer now", "I work as a Java backend developer", "update"),
    ("我转行做产品经理了", "我是一名Java后端工程师", "update"),
    ("I no longer like coffee", "I like coffee", "update"),
    ("我不再喜欢咖啡了", "我喜欢咖啡", "update"),
    ("My favourite drink is green tea", "My favourite drink is coffee", "update"),
    ("I switched to tea", "I drink coffee every morning", "update"),
    ("My name is Robert", "My name is Bob", "update"),
    ("I work at Google", "I live in Shanghai", "new"),  # compatible slots
    ("我在腾讯工作", "我住在深圳", "new"),
    ("I like tea", "I like coffee", "new"),  # likes are many
    ("I moved to Berlin", "I live in Berlin", "same"),  # the same slot and value in other words
    ("I live in Shanghai.", "i live in shanghai", "same"),
    ("I moved to Berlin", "I live in Shanghai and work at Siemens", "conflict"),  # the old one says more
])
def test_rules_decide(new, old, verdict):
    decision = rules_decide(new, [("old", old, 0.5)])
    assert decision.verdict == verdict, decision
    assert decision.targets == ([] if verdict == "new" else ["old"])
    assert decision.reason.startswith("rules")


def test_a_change_without_a_known_slot_near_in_meaning_is_a_conflict_not_an_update():
    decision = rules_decide("I stopped being vegetarian", [("old", "I am vegetarian", 0.86)])
    assert decision.verdict == "conflict" and decision.targets == ["old"]
    assert rules_decide("I stopped being vegetarian", [("old", "I am vegetarian", 0.4)]).verdict == "new"
