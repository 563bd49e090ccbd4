"""A question about an attribute of the person (their job, where they live, their pets) finds the statement of
it with the agent's minimum relevance even when the two share no word and their cosine is low, or when the
statement says more around it; a question about nothing of the person still finds nothing (ranking's attribute
term and best clause, docs/retrieval.md § The ranking)."""

from __future__ import annotations

import pytest

from memoryboard.ltm.search.retrieval import memory_retrieve
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db


def ns(user):
    return build_namespace(agent_namespace="chat", user_id=str(user.pk))


def ask(user, query):
    return [item.memory.content for item in memory_retrieve(namespace=ns(user), query=query, k=5, log_access=False)]


@pytest.mark.parametrize("job, other, question", [
    ("I'm a solicitor now", "we have a tortoise called Shelly", "What is the user's job?"),
    ("我在一家医院当护士", "我养了一只兔子", "用户是做什么工作的？"),
], ids=["english", "chinese"])
def test_a_question_about_the_job_finds_the_stated_job(use_embedder, alice, make_memory, job, other, question):
    make_memory(alice, job)
    make_memory(alice, other)

    found = ask(alice, question)

    assert found[:1] == [job], found
    assert other not in found


@pytest.mark.parametrize("job, question", [
    ("I'm a nurse", "What does the user do for a living?"),
    ("I'm a paramedic in Cork", "What does the user do?"),
    ("我是会计", "用户是做什么的？"),
    ("我是一名厨师", "用户现在做什么？"),
], ids=["for-a-living", "do", "chinese", "chinese-now"])
def test_a_question_near_no_statement_of_the_attribute_is_read_by_the_questions_like_it(
        use_embedder, alice, make_memory, job, question):
    # "What does the user do?" is nearer a phone (0.27: "user") than a job (0.23) as a statement, and near the job's
    # questions (llm.attributes.QUESTIONS); before, each of these was given nothing.
    make_memory(alice, job)
    make_memory(alice, "我养了一只兔子")

    assert ask(alice, question) == [job]


def test_a_question_near_two_attributes_finds_a_statement_of_either(use_embedder, alice, make_memory):
    # "Where does the user work now" is nearer how one works (from home, in shifts: 0.43) than where (the
    # employer: 0.35); the move to another employer still counts.
    make_memory(alice, "从设计院跳槽到一家地产公司了，人还在南京")
    make_memory(alice, "家里养了只猫叫芝麻，超黏人")

    assert ask(alice, "用户现在在哪里工作？") == ["从设计院跳槽到一家地产公司了，人还在南京"]


@pytest.mark.parametrize("fact, question", [
    ("cancelled PureGym, joined the climbing wall near work instead", "Where does the user work out?"),
    ("最近换了工作，在一家银行做柜员，工资一般般", "用户的主业是什么？"),
], ids=["english", "chinese"])
def test_a_fact_said_with_more_around_it_is_given_by_its_best_clause(use_embedder, alice, make_memory, fact, question):
    # As a whole the message is under the agent's minimum; the clause that answers is not.
    make_memory(alice, fact)
    make_memory(alice, "we have a tortoise called Shelly")

    assert ask(alice, question) == [fact]


@pytest.mark.parametrize("before, fact, question", [
    ("got the flu, been in bed three days, everything hurts",
     "feeling human again. anyway I'm a night-shift nurse so back to work tomorrow", "What is the user's job?"),
    ("周末去爬山了，腿好酸", "上次的请假条谢谢哈，我已经离开物业了，现在在小区门口开了个快递驿站，自己当老板", "用户现在做什么？"),
], ids=["english", "chinese"])
def test_a_fact_said_after_small_talk_is_given_by_its_clause_nearest_the_attribute(
        use_embedder, alice, make_memory, before, fact, question):
    # As a whole the message is near one's job only in part (the small talk pulls it away), and shares no word with
    # the question; its clause "anyway I'm a night-shift nurse" is a statement of a job. Before, nothing was given.
    make_memory(alice, before)
    make_memory(alice, fact)

    assert ask(alice, question) == [fact]


def test_an_embeddings_endpoint_is_asked_for_the_query_only(openai_settings, alice, make_memory):
    # The clauses are read with an offline embedder only: online, a second request per search.
    make_memory(alice, "cancelled PureGym, joined the climbing wall near work instead")
    make_memory(alice, "we have a tortoise called Shelly, she is 40")
    openai_settings.reset()

    ask(alice, "Where does the user work out?")

    assert [body["input"] for body in openai_settings.embedding_requests()] == [["Where does the user work out?"]]


@pytest.mark.parametrize("query", ["what's the weather like", "What's the weather like?", "今天天气怎么样？",
                                   "Who won the 1998 football World Cup?", "What time is it in Tokyo?",
                                   "What's the capital of Australia?"])
def test_an_unrelated_question_still_finds_nothing_among_attribute_facts(use_embedder, alice, make_memory, query):
    for fact in ("I'm a solicitor now", "we have a tortoise called Shelly", "I've been vegan since January",
                 "我在一家医院当护士", "我养了一只兔子"):
        make_memory(alice, fact)

    assert ask(alice, query) == []
    assert ask(alice, "What does the user do for work?")[:2] and ask(alice, "用户养了什么宠物？")[:1] == ["我养了一只兔子"]


@pytest.mark.parametrize("fact, question", [
    # With the attributes' first questions only, each was partly its attribute's (health 0.75) or nearer another's
    # (the schedule: plans 0.76; 作息: sport 0.62).
    ("I've got Crohn's", "What medical conditions does the user have?"),
    ("I'm up at 5 for my shifts", "What is the user's schedule?"),
    ("每天十二点睡七点起", "用户的作息是怎样的？"),
    # One's job and one's employer are one family: "a porter at a hotel" is nearer the employer's prototypes than the
    # job's, under the margin before.
    ("I'm a porter at a hotel in Bath", "What does the user do?"),
    ("我在一家律所上班", "用户是做什么的？"),
    ("I'm a chef", "Where does the user work?"),
], ids=["conditions", "schedule", "schedule-zh", "job-said-as-a-workplace", "job-said-as-a-workplace-zh",
        "workplace-said-as-a-job"])
def test_a_statement_of_the_asked_attribute_is_given_however_the_question_and_the_statement_name_it(
        use_embedder, alice, make_memory, fact, question):
    # Each fact was given nothing.
    make_memory(alice, fact)
    make_memory(alice, "I prefer short answers")

    assert ask(alice, question)[:1] == [fact]
