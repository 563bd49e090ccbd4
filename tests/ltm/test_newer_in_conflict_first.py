"""Two items the reconcile step kept both current and flagged in conflict (it was unsure whether the later statement
changes the earlier): until someone reviews them, a search gives the later first, when it is at least as near the
attribute asked about or both are nearest one attribute (ranking's ``newer_in_conflict_first``, docs/retrieval.md
§ The ranking)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memoryboard.ltm.search import ranking
from memoryboard.ltm.search.retrieval import memory_retrieve, memory_search, namespace_scope
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db


def ns(user):
    return build_namespace(agent_namespace="chat", user_id=str(user.pk))


def say(user, content, days_ago):
    return memory_save_reconciled(namespace=ns(user), content=content, memory_type="FACT", agent_id="chat",
                                  observed_at=timezone.now() - timedelta(days=days_ago))


def ask(user, query):
    return [item.memory.content for item in memory_retrieve(namespace=ns(user), query=query, k=5, log_access=False)]


@pytest.mark.parametrize("before, after, question", [
    # A knee "said as a change" beside an injury: of another attribute than the stored one's (sport / health).
    ("我的膝盖有旧伤，大学踢球弄的", "现在不踢了，改打羽毛球，膝盖受得了", "用户现在做什么运动？"),
    ("I live in Shanghai and work at Siemens", "I moved to Berlin", "Where does the user live?"),
], ids=["chinese-knee", "english-move"])
def test_the_later_of_two_items_in_conflict_is_given_first(use_embedder, alice, before, after, question):
    say(alice, before, days_ago=200)
    result = say(alice, after, days_ago=7)
    assert result.decision.verdict == "conflict"  # both current, for review

    assert ask(alice, question)[:2] == [after, before]
    # The search a person asks for (the k best) is the same one ranking.
    found = memory_search(queryset=namespace_scope(ns(alice)), query=question, k=5, user_id=str(alice.pk))
    assert [item.memory.content for item in found][:2] == [after, before]


def test_the_later_is_not_put_first_when_it_is_further_from_the_attribute_asked(use_embedder, alice):
    # "I grew up in Osaka" is where one comes from, nearer that than where one lives: for "Where does the user live?"
    # Tokyo stays first.
    first = say(alice, "I live in Tokyo.", days_ago=100).memory
    later = say(alice, "I grew up in Osaka.", days_ago=0).memory
    flag(first, later)

    assert ask(alice, "Where does the user live?")[:1] == ["I live in Tokyo."]


def test_items_not_in_conflict_keep_their_order(use_embedder, alice):
    say(alice, "I live in Tokyo.", days_ago=100)
    say(alice, "I work in Yokohama.", days_ago=0)

    assert ask(alice, "Where does the user live?")[:1] == ["I live in Tokyo."]


def flag(*items):
    for item in items:
        item.value_json = {**item.value_json, "conflictWith": [other.pk for other in items if other is not item]}
        item.save(update_fields=["value_json"])


@pytest.mark.parametrize("items, expected", [
    # (id, when said, in conflict with, attribute term, nearest attribute), best first
    ([("a", 1, ["b"], 0.5, "job"), ("b", 2, ["a"], 0.5, "job")], [1, 0]),
    ([("a", 2, ["b"], 0.5, "job"), ("b", 1, ["a"], 0.5, "job")], [0, 1]),  # the older is below already
    ([("a", 1, ["b"], 0.9, "residence"), ("b", 2, ["a"], 0.3, "origin")], [0, 1]),  # further from the attribute
    ([("a", 1, ["b"], 0.9, "routine"), ("b", 2, ["a"], 0.0, "routine")], [1, 0]),  # but nearest the same one
    ([("a", 1, ["b"], 0.9, None), ("b", 2, ["a"], 0.3, None)], [0, 1]),  # a model without attributes
    ([("a", 1, ["c"], 0.0, None), ("x", 5, [], 0.0, None), ("c", 3, ["a"], 0.0, None)], [2, 0, 1]),  # just above
    ([("a", 1, ["b", "c"], 0.0, None), ("b", 2, ["a", "c"], 0.0, None), ("c", 3, ["a", "b"], 0.0, None)], [2, 1, 0]),
    ([("a", 1, ["gone"], 0.0, None), ("b", 2, [], 0.0, None)], [0, 1]),  # the other not given
], ids=["later-first", "already", "further", "same-attribute", "no-attributes", "just-above", "three", "not-given"])
def test_the_order_of_items_in_conflict(items, expected):
    assert ranking.newer_in_conflict_first(items) == expected
