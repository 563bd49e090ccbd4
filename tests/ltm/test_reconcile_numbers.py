"""A number written differently ("two" / "2" / 两 / 二, 三十五 / 35, "1,200" / "1200", full width) is the
same value: a repeat that writes it otherwise, in either language, reinforces the stored item."""

from __future__ import annotations

import pytest

from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.ltm.write.statements import normalize_statement, number_values
from memoryboard.models import LongTermMemory
from memoryboard.models.namespaces import build_namespace


@pytest.mark.parametrize("text,numbers", [
    ("I have two kids", {"2"}),
    ("I'm thirty-five", {"35"}),
    ("我有两个孩子", {"2"}),
    ("我三十五岁", {"35"}),
    ("我住在十二楼", {"12"}),
    ("我年薪三万五", {"35000"}),
    ("I earn 35k a year", {"35000"}),
    ("My rent is 1,200 a month", {"1200"}),
    ("我３５岁", {"35"}),
    ("我们一起去，万一下雨呢", set()),  # 一 and 万 inside words are not numbers
])
def test_a_number_is_read_however_it_is_written(text, numbers):
    assert number_values(text) == numbers


@pytest.mark.parametrize("first,again", [
    ("I have two kids.", "I have 2 kids"),
    ("我有两个孩子。", "我有2个孩子"),
    ("我今年三十五岁", "我今年３５岁"),
])
def test_a_statement_with_its_number_written_otherwise_is_the_same_statement(first, again):
    assert normalize_statement(first) == normalize_statement(again)


def ns(user):
    return build_namespace(agent_namespace="chat", user_id=str(user.pk))


def save(user, content):
    return memory_save_reconciled(namespace=ns(user), content=content, agent_id="chat", memory_type="FACT")


def current(user):
    return sorted(m.content for m in LongTermMemory.objects.filter(namespace=ns(user).as_text(), archived=False))


@pytest.mark.django_db
@pytest.mark.parametrize("first,again", [
    ("I'm thirty-five", "I'm 35"),
    ("My rent is 1,200 a month", "My rent is 1200 per month"),
    ("我住在十二楼", "我住12楼"),
    # across languages, the number written otherwise
    ("I've been married for ten years", "我结婚十年了"),
    ("I earn 35k a year", "我年薪三万五"),
])
def test_a_repeat_with_the_number_written_otherwise_is_the_same_fact(alice, use_embedder, first, again):
    old = save(alice, first).memory
    result = save(alice, again)
    assert result.decision.verdict == "same", result.decision.reason
    assert result.memory.pk == old.pk and current(alice) == [first]


@pytest.mark.django_db
def test_the_same_number_of_other_things_is_not_a_repeat(alice, use_embedder):
    save(alice, "I have two kids")
    result = save(alice, "我养了两只猫")
    assert result.decision.verdict != "same", result.decision.reason
    assert current(alice) == sorted(["I have two kids", "我养了两只猫"])
