"""A question about the person ("What does the user do for work?", 用户住在哪里？) gives the person's own fact before one
about someone of theirs that is as near ("my husband just started a new job as a paramedic"); a question about someone
of theirs is left as it is (ranking's ``someone_else``, docs/retrieval.md § The ranking)."""

from __future__ import annotations

import pytest

from memoryboard.llm.cues import asks_about_the_user, tells_of_someone_else
from memoryboard.ltm.search.retrieval import memory_retrieve, memory_search, namespace_scope
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db


def ask(user, query):
    ns = build_namespace(agent_namespace="chat", user_id=str(user.pk))
    return [item.memory.content for item in memory_retrieve(namespace=ns, query=query, k=5, log_access=False)]


@pytest.mark.parametrize("own, other, question", [
    ("I'm a dentist in Hove", "my husband just started a new job as a paramedic, so proud of him",
     "What does the user do for work?"),
    ("我和老公去年搬到了杭州", "我弟弟住在苏州", "用户住在哪里？"),
    ("My wife and I moved to Leeds last year", "my brother lives in York", "Where does the user live?"),
], ids=["english", "chinese-with-husband", "english-with-wife"])
def test_the_persons_own_fact_comes_before_one_about_someone_of_theirs(use_embedder, alice, make_memory, own, other,
                                                                       question):
    make_memory(alice, own)
    make_memory(alice, other)

    assert ask(alice, question)[:1] == [own]


def test_a_question_about_someone_of_theirs_still_finds_that_persons_fact(use_embedder, alice, make_memory):
    make_memory(alice, "I'm a dentist in Hove")
    make_memory(alice, "my wife is a teacher")

    assert ask(alice, "What does the user's wife do?")[:1] == ["my wife is a teacher"]


def test_the_search_explains_the_lower_score(use_embedder, alice, make_memory):
    make_memory(alice, "I'm a dentist in Hove")
    make_memory(alice, "my husband just started a new job as a paramedic, so proud of him")

    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    found = memory_search(queryset=namespace_scope(ns), user_id=str(alice.pk), query="What does the user do for work?",
                          k=5)

    assert [(r.memory.content, r.parts.someone_else) for r in found] == [
        ("I'm a dentist in Hove", 0.0), ("my husband just started a new job as a paramedic, so proud of him", 1.0)]


@pytest.mark.parametrize("question, about", [
    ("What does the user do for work?", True), ("用户对什么过敏？", True), ("What does the user's wife do?", False),
    ("用户的女儿几岁？", False), ("Which school does Theo go to?", False), ("What's the weather like?", False),
])
def test_which_questions_are_about_the_person(question, about):
    assert asks_about_the_user(question) is about


@pytest.mark.parametrize("text, other", [
    ("my husband is a paramedic", True), ("我女儿对花生过敏", True), ("My wife and I moved to Leeds", False),
    ("我和老公搬到了杭州", False), ("I support Arsenal", False), ("The user lives in Graz.", False),
])
def test_which_statements_tell_of_someone_else(text, other):
    assert tells_of_someone_else(text) is other
