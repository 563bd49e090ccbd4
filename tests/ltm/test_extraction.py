"""Channel A: should_skip_extraction layers, and extraction through the openai client and offline."""

from __future__ import annotations

import json

import pytest

from memoryboard.agents_config import parse_agents_config
from memoryboard.ltm.write.extraction import (
    SKIP_ALREADY_KNOWN,
    SKIP_DISABLED_AGENT,
    SKIP_NO_STATEMENT,
    SKIP_SMALL_TALK,
    SKIP_TOO_SHORT,
    SKIP_USER_SWITCH,
    memory_extract_and_save,
    should_skip_extraction,
)
from memoryboard.models import LongTermMemory, UserMemorySettings

pytestmark = pytest.mark.django_db

CONFIG = parse_agents_config({"agent": {"agents": {
    "chat": {"long-term-memory": {"enabled": True, "namespace": "chat", "max-items": 3}},
    "noextract": {"long-term-memory": {"enabled": True, "namespace": "chat", "auto-extract": False}},
    "off": {},
}}})


@pytest.fixture(autouse=True)
def agents(monkeypatch):
    monkeypatch.setattr("memoryboard.ltm.write.extraction.get_agents_config", lambda: CONFIG)


def skip(message, user, agent="chat", conversation=()):
    return should_skip_extraction(user_message=message, conversation=list(conversation),
                                  agent_config=CONFIG.get(agent), user_id=str(user.pk))


def test_disabled_agent_and_user_switch(alice):
    assert skip("I am a Rust developer at Acme", alice, agent="off") == SKIP_DISABLED_AGENT
    assert skip("I am a Rust developer at Acme", alice, agent="noextract") == SKIP_DISABLED_AGENT
    UserMemorySettings.objects.create(user_id=str(alice.pk), save_memories=False)
    assert skip("I am a Rust developer at Acme", alice) == SKIP_USER_SWITCH


@pytest.mark.parametrize("message", ["ok", "hi!", "好", "嗯嗯", "谢谢", "  ", "👍"])
def test_too_short_or_small_talk(alice, message):
    assert skip(message, alice) in (SKIP_TOO_SHORT, SKIP_SMALL_TALK)


@pytest.mark.parametrize("message", [
    "hello there, thanks a lot!", "Good morning", "ok thanks, got it", "你好，谢谢你！", "好的，明白了", "晚安，再见",
])
def test_small_talk(alice, message):
    assert skip(message, alice) == SKIP_SMALL_TALK


@pytest.mark.parametrize("message", ["我今年三十五岁。", "My birthday is on March 3rd.", "I'm 34", "领证啦！！",
                                     "just adopted a rescue greyhound called Dash", "搬家了，现在离公司近多了"])
def test_a_short_real_statement_is_not_skipped(alice, message):
    assert skip(message, alice) is None


@pytest.mark.parametrize("message", ["What is the capital of France?", "红烧肉要不要先焯水？", "你好吗",
                                     "if I were rich I'd buy a boat", "我的wifi密码是 sunflower77"])
def test_only_questions_hypotheticals_or_secrets(alice, message):
    assert skip(message, alice) == SKIP_NO_STATEMENT


def test_a_request_is_left_to_the_extractor_which_stores_nothing(alice):
    assert skip("解释一下快速排序算法的原理", alice) is None
    turn = [{"role": "user", "content": "解释一下快速排序算法的原理"}]
    assert memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=turn) == []


def test_an_answer_to_the_assistants_question_is_not_skipped(alice):
    conversation = [{"role": "assistant", "content": "Which language do you use at work?"}]
    assert skip("Mostly Kotlin and some Go", alice, conversation=conversation) is None


def test_already_remembered(alice, make_memory):
    make_memory(alice, "I am a Rust developer")
    assert skip("I am a Rust developer.", alice) == SKIP_ALREADY_KNOWN
    assert skip("I am a Rust developer. I also like tea very much.", alice) is None


@pytest.mark.parametrize("message", ["I am a Rust developer at Acme", "我是一名Java后端开发者", "我喜欢简洁的回答"])
def test_self_statements_are_extracted(alice, message):
    assert skip(message, alice) is None


TURN = [{"role": "user", "content": "I'm a data engineer and I prefer short answers"},
        {"role": "assistant", "content": "Noted!"}]


def test_extraction_through_the_openai_client(openai_settings, alice):
    openai_settings.push_reply(content=json.dumps([
        {"type": "FACT", "content": "User is a data engineer"},
        {"type": "PREFERENCE", "content": "Prefers short answers"},
    ]))
    saved = memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=TURN)
    assert [(m.memory_type, m.content, m.source) for m in saved] == [
        ("FACT", "User is a data engineer", "auto_extract"), ("PREFERENCE", "Prefers short answers", "auto_extract")]
    assert all(m.namespace == f'["agent:chat","user:{alice.pk}","memories"]' for m in saved)
    request = openai_settings.chat_requests()[0]
    assert "I'm a data engineer" in request["messages"][1]["content"]
    assert LongTermMemory.objects.filter(embeddings__isnull=False).count() == 2


def test_a_repeat_is_reinforced_not_stored_again_and_limit_enforced(openai_settings, alice, make_memory):
    make_memory(alice, "User is a data engineer")
    make_memory(alice, "User plays chess on Sundays")
    LongTermMemory.objects.update(relevance_score=0.5)
    reply = json.dumps([{"type": "FACT", "content": "User is a data engineer"},
                        {"type": "FACT", "content": "User lives in Berlin"},
                        {"type": "EPISODE", "content": "User moved last week"}])
    openai_settings.push_reply(content=reply)
    saved = memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=TURN)
    assert sorted(m.content for m in saved) == ["User lives in Berlin", "User moved last week"]
    known = LongTermMemory.objects.get(value_json__content="User is a data engineer")
    assert known.value_json["seenCount"] == 2
    assert known.value_json["sources"][-1] == {"source": "auto_extract", "at": known.value_json["lastSeenAt"],
                                                "conversationId": "c1"}
    assert LongTermMemory.objects.filter(archived=False).count() == 3  # max-items 3: a low-scored one went
    assert LongTermMemory.objects.get(archived=True).archived_reason == "over_limit"


@pytest.mark.parametrize("fault", ["http500", "timeout", "malformed"])
def test_faults_save_nothing(openai_settings, alice, fault):
    openai_settings.set_fault(fault)
    assert memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=TURN) == []
    assert not LongTermMemory.objects.exists()


def test_a_reply_that_is_not_json_saves_nothing(openai_settings, alice):
    openai_settings.push_reply(content="Sure! The user is an engineer.")
    assert memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=TURN) == []


def test_offline_extraction_and_the_task(alice):
    from memoryboard.ltm.write.tasks import extract_memories_task

    result = extract_memories_task.enqueue(agent_id="chat", user_id=str(alice.pk), conversation_id="c1",
                                           conversation=TURN)
    assert result.return_value and len(result.return_value) == 2  # one item per fact
    assert sorted((m.memory_type, m.content, m.source) for m in LongTermMemory.objects.all()) == [
        ("FACT", "I'm a data engineer", "auto_extract"), ("PREFERENCE", "I prefer short answers", "auto_extract")]


def test_a_withheld_secret_is_named_in_the_audit(alice):
    from memoryboard.models import AuditLog

    turn = [{"role": "user", "content": "new laptop finally, a Dell XPS 15! password is Tr0mbone#22 so I don't forget"}]
    saved = memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=turn)
    assert [m.content for m in saved] == ["new laptop finally", "a Dell XPS 15"]
    assert not any("Tr0mbone" in m.content for m in LongTermMemory.objects.all())
    assert any("not stored: a password" in entry.reason_label for entry in AuditLog.objects.all())


def test_switch_turned_off_after_the_turn_saves_nothing(alice):
    UserMemorySettings.objects.create(user_id=str(alice.pk), save_memories=False)
    assert memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=TURN) == []


def test_embedding_fault_after_extraction_saves_nothing(openai_settings, alice):
    openai_settings.push_reply(content=json.dumps([{"type": "FACT", "content": "User is a data engineer"}]))
    openai_settings.push_fault("http500")  # the embeddings of the extracted items
    assert memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1", conversation=TURN) == []
    assert not LongTermMemory.objects.exists()
