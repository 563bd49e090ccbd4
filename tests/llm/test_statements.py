"""The offline extractor's grammar: clauses, cues (who a statement is about, questions, requests), secrets,
and the shipped classifier's weights."""

from __future__ import annotations

import numpy as np
import pytest

from memoryboard.llm.clauses import split_clauses, strip_quoted
from memoryboard.llm.cues import (
    CUE_NAMES,
    Subject,
    clause_cues,
    find_secrets,
    is_hypothetical,
    is_question,
    is_request,
    is_small_talk,
    relations_named,
    statement_subject,
)
from memoryboard.llm.embeddings import RecentVectors
from memoryboard.llm.statement_model import StatementModel, StatementModelError, shipped_statement_model


def texts(message: str) -> list[str]:
    return [clause.text for clause in split_clauses(message)]


@pytest.mark.parametrize("message,clauses", [
    ("I'm 34, married, two kids, and we just moved to Porto so everything is chaos.",
     ["I'm 34, married", "two kids", "we just moved to Porto", "everything is chaos"]),
    ("我老婆是老师，我们住在杭州，周末一般去爬山。", ["我老婆是老师", "我们住在杭州", "周末一般去爬山"]),
    ("我四川人 超能吃辣", ["我四川人", "超能吃辣"]),
    ("I speak English and Tagalog and I'm learning Japanese", ["I speak English and Tagalog", "I'm learning Japanese"]),
    ("Our budget for the trip is 2,000 euros.", ["Our budget for the trip is 2,000 euros"]),
    ("I'm self-employed (plumber) so no workplace pension", ["I'm self-employed (plumber)", "no workplace pension"]),
    ("Tone: polite but firm.", ["Tone: polite but firm"]),
    ("I work with Node.js daily. Dr. Lee is my GP", ["I work with Node.js daily", "Dr. Lee is my GP"]),
    ("just adopted a rescue greyhound called Dash 🐕 so happy", ["just adopted a rescue greyhound called Dash", "happy"]),
])
def test_clauses(message, clauses):
    assert texts(message) == clauses


def test_long_quotes_are_text_to_process_short_ones_stay():
    assert texts("Summarise: 'John moved to Paris in 2010 and worked as a chef.'") == ["Summarise"]
    assert texts("翻译成英文：“我在上海工作了五年，现在准备回老家。”") == ["翻译成英文"]
    assert strip_quoted("User goes by 'Alex' these days") == "User goes by 'Alex' these days"
    assert strip_quoted("I'm sure it's fine") == "I'm sure it's fine"


def test_only_the_last_clause_carries_the_question_mark():
    clauses = split_clauses("I'm a nurse, any tips for night shifts?")
    assert [(c.text, c.mark) for c in clauses] == [("I'm a nurse", ""), ("any tips for night shifts", "?")]


@pytest.mark.parametrize("text,subject", [
    ("I live in Graz", Subject("user")), ("我在腾讯工作", Subject("user")), ("The user moved to Ghent", Subject("user")),
    ("用户是护士", Subject("user")), ("Customer prefers email", Subject("user")), ("搬家了", Subject("user")),
    ("my birthday is March 3rd", Subject("user")), ("我在家养猫", Subject("user")),
    ("my older sister lives in Rome", Subject("other", "sister")), ("My landlord raised the rent", Subject("other", "landlord")),
    ("我妈退休了", Subject("other", "mother")), ("我家猫叫土豆", Subject("other", "cat")), ("我老婆是老师", Subject("other", "wife")),
    ("The user's daughter is 7", Subject("other", "daughter")),
    ("my sons go to Hilltop Primary", Subject("other", "son")), ("my boss is strict", Subject("other", "boss")),
    ("the trains are on strike", Subject("none")), ("听说明天要降温", Subject("none")),
    # After words that say nothing of whom, in dialect, and in a note reporting the person's words.
    ("fun fact my brother just became a pilot", Subject("other", "brother")),
    ("side note: my sister qualified as a dentist", Subject("other", "sister")),
    ("me best mate moved to Melbourne", Subject("other", "friend")), ("me and my brother moved to Leeds", Subject("user")),
    ("The customer said that her husband lost his job.", Subject("other", "husband")),
    ("用户说她老公换工作了", Subject("other", "husband")), ("The user said that he moved to Ghent.", Subject("user")),
    ("用户表示现在更希望通过微信联系", Subject("user")),
    # After saying it was said before: the "I" of the saying is not the subject.
    ("as I said, my wife is vegetarian", Subject("other", "wife")),
    ("like I told you my son plays rugby", Subject("other", "son")),
    ("我说过我女儿在学钢琴", Subject("other", "daughter")), ("跟你讲过的，我妈退休了", Subject("other", "mother")),
    ("as I said, I teach at Oakfield Primary", Subject("user")), ("我说过很多次了", Subject("user")),
    # What someone who acts for the person does to them is the person's fact; the polite words for a spouse.
    ("My doctor took me off metformin", Subject("user")), ("my landlord put my rent up", Subject("user")),
    ("我的老板让我下个月去上海出差", Subject("user")), ("my boss is Tom now", Subject("other", "boss")),
    ("my sister told me she's pregnant", Subject("other", "sister")),
    ("我先生在华为上班", Subject("other", "husband")), ("我太太是老师", Subject("other", "wife")),
    ("王先生是我的客户", Subject("user")),
])
def test_who_a_statement_is_about(text, subject):
    assert statement_subject(text) == subject


@pytest.mark.parametrize("one,other", [
    ("my mum's on warfarin", "我妈退休了"), ("我女儿在学钢琴", "我闺女上一年级了"), ("my kids love swimming", "孩子们都睡了吗"),
    ("My husband is a pilot", "我老公 is on nights"),
])
def test_one_person_named_by_other_words_or_in_the_other_language_is_one_person(one, other):
    assert statement_subject(one).holder in relations_named(other)


def test_a_person_named_in_the_plural_is_the_one_a_subject_names():
    """"my sons" as the subject and "our son" named later are one person of the user's life (the reconcile
    asks whether a statement names the stored fact's person)."""
    assert statement_subject("My sons go to Hilltop Primary").holder in relations_named("we moved our son to Riverside")
    assert statement_subject("my kids love swimming").holder in relations_named("the kid hates it now")
    assert relations_named("my boss and my friends") == {"boss", "friend"}


def test_cues():
    assert is_question("what's the capital of Peru?") and is_question("你好吗") and not is_question("did my PGCE this year")
    assert is_request("can you help me") and is_request("帮我改一下") and is_request("shorter please")
    assert not is_request("I'm a nurse")
    assert is_small_talk("ok thanks!!") and is_small_talk("哈哈哈") and not is_small_talk("ok I'm a nurse")
    assert is_hypothetical("if I were rich I'd buy a boat") and is_hypothetical("要是能去南极就好了")
    assert not is_hypothetical("she's called Poppy if that helps")
    cues = dict(zip(CUE_NAMES, clause_cues("can you recommend a book", sentence_end="?")))
    assert cues["question_mark"] == cues["request"] == cues["second_person"] == 1.0 and cues["first_person"] == 0.0
    cues = dict(zip(CUE_NAMES, clause_cues("文艺一点的", previous="帮我写个朋友圈文案")))
    assert cues["after_non_statement"] == cues["no_person"] == 1.0


@pytest.mark.parametrize("text,kinds", [
    ("my wifi password is sunflower77", ["password"]), ("我支付宝密码 258369 别告诉别人哈", ["password"]),
    ("pin for the garage door is 7731", ["PIN or code"]), ("CVV 392, exp 11/27", ["PIN or code"]),
    ("我的银行卡号是6222 0202 0000 1234 567", ["card number"]), ("身份证号 330102198807154321", ["ID number"]),
    ("SSN 123-45-6789", ["ID number"]), ("here's my openai key sk-proj-9fK2xQ7mL0aB3cD4eF5gH6iJ", ["API key"]),
    ("I write code in Python 3 and my budget is 2,000 euros", []), ("I was born in 1991, call me on Monday", []),
])
def test_secrets(text, kinds):
    assert find_secrets(text) == kinds


def test_the_shipped_weights_fit_the_code(tmp_path):
    model = shipped_statement_model()
    assert model.keep_weights.shape == (512 + len(CUE_NAMES),) and model.type_weights.shape == (4, 512 + len(CUE_NAMES))
    assert 0 < model.threshold < 1 and model.info["hyper"]["threshold"] == pytest.approx(model.threshold)
    stale = tmp_path / "stale.npz"
    StatementModel(model.keep_weights, model.keep_bias, model.threshold, model.type_weights, model.type_bias,
                   {}).save(stale)
    data = dict(np.load(stale))
    data["info"] = np.array('{"cues": ["question_mark"], "encoder": "use-multilingual-v3"}')
    np.savez(stale, **data)
    with pytest.raises(StatementModelError, match="train_statement_model"):
        StatementModel.load(stale)


def test_recent_vectors_encode_each_text_once():
    calls = []

    def encode(texts):
        calls.append(list(texts))
        return np.arange(len(texts) * 2, dtype=np.float32).reshape(len(texts), 2) + len(calls) * 10

    recent = RecentVectors(size=2)
    first = recent.embed(["a", "b", "a"], encode)
    assert calls == [["a", "b"]] and (first[0] == first[2]).all()
    again = recent.embed(["b", "c"], encode)
    assert calls[-1] == ["c"] and (again[0] == first[1]).all()
    recent.embed(["a"], encode)  # "a" was the least recently used of the two kept
    assert calls[-1] == ["a"]
