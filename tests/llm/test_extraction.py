from __future__ import annotations

import json

import pytest

from memoryboard.llm.chat import ChatReply, OpenAIChatModel
from memoryboard.llm.errors import LLMError
from memoryboard.llm.extraction import (
    EXTRACTION_PROMPT,
    ExtractedItem,
    LLMExtractor,
    MemoryExtractor,
    RuleBasedExtractor,
    extract_memories,
    parse_extraction,
)

CONVERSATION = [
    {"role": "system", "content": "You are an assistant."},
    {"role": "user", "content": "我是Java后端开发者，我喜欢简洁的回答。"},
    {"role": "assistant", "content": "好的！I am a robot."},
]


@pytest.fixture
def extractor(client):
    return LLMExtractor(OpenAIChatModel(client, "fake-chat"))


def test_protocol(extractor):
    assert isinstance(extractor, MemoryExtractor)
    assert isinstance(RuleBasedExtractor(), MemoryExtractor)


def test_one_call_with_prompt_and_transcript(extractor, openai_server):
    openai_server.push_reply(content=json.dumps([
        {"type": "FACT", "content": "用户是Java后端开发者"},
        {"type": "preference", "content": "偏好简洁的回答"},
    ], ensure_ascii=False))

    items = extractor.extract(CONVERSATION)

    assert items == [ExtractedItem("FACT", "用户是Java后端开发者"), ExtractedItem("PREFERENCE", "偏好简洁的回答")]
    (body,) = openai_server.chat_requests()
    system, user = body["messages"]
    assert system == {"role": "system", "content": EXTRACTION_PROMPT}
    assert "user: 我是Java后端开发者" in user["content"]
    assert "assistant: 好的" in user["content"]
    assert "You are an assistant." not in user["content"]
    assert "JSON" in EXTRACTION_PROMPT and "长期记忆" in EXTRACTION_PROMPT


@pytest.mark.parametrize(
    "answer",
    [
        '[{"type": "FACT", "content": "likes tea"}]',
        '```json\n[{"type": "FACT", "content": "likes tea"}]\n```',
        '```\n{"memories": [{"type": "FACT", "content": "likes tea"}]}\n```',
        '{"memories": [{"type": "FACT", "content": "likes tea"}, {"type": "MOOD", "content": "happy"}]}',
        'Here you go:\n[{"type": "FACT", "content": "  likes tea "}, {"type": "FACT"}, "junk", {"content": "x"}]\nDone.',
        '{"type": "FACT", "content": "likes tea"}',
    ],
)
def test_parsing_variants(answer):
    assert parse_extraction(answer) == [ExtractedItem("FACT", "likes tea")]


@pytest.mark.parametrize("answer", ["[]", '{"memories": []}', "```json\n[]\n```"])
def test_nothing_to_remember(answer):
    assert parse_extraction(answer) == []


@pytest.mark.parametrize("answer", ["", "I found nothing.", '{"memories": "none"}', "[{broken", '"just a string"'])
def test_malformed_answers(answer):
    with pytest.raises(LLMError) as info:
        parse_extraction(answer)
    assert info.value.reason == "malformed response"


def test_malformed_answer_through_the_client(extractor, openai_server):
    openai_server.push_reply(content="Sorry, I cannot do that.")
    with pytest.raises(LLMError) as info:
        extractor.extract(CONVERSATION)
    assert info.value.reason == "malformed response"


@pytest.mark.parametrize(("fault", "reason"), [("http500", "HTTP 500"), ("malformed", "malformed response")])
def test_transport_faults(extractor, openai_server, fault, reason):
    openai_server.push_fault(fault)
    with pytest.raises(LLMError) as info:
        extractor.extract(CONVERSATION)
    assert info.value.reason == reason


def test_empty_conversation_makes_no_call():
    class Boom:
        name, is_offline = "boom", True

        def complete(self, messages, *, tools=None):
            raise AssertionError("called")

    assert extract_memories([{"role": "system", "content": "x"}], chat_model=Boom()) == []


def test_works_with_any_chat_model():
    class Scripted:
        name, is_offline = "scripted", True

        def complete(self, messages, *, tools=None):
            return ChatReply(content='[{"type": "EPISODE", "content": "moved house yesterday"}]')

    assert extract_memories(CONVERSATION, chat_model=Scripted()) == [ExtractedItem("EPISODE", "moved house yesterday")]


# --- rules ---------------------------------------------------------------------------------


def rules(*user_texts: str, assistant: str | None = None) -> list[tuple[str, str]]:
    conversation = [{"role": "USER", "content": text} for text in user_texts]
    if assistant:
        conversation.append({"role": "assistant", "content": assistant})
    return [(item.type, item.content) for item in RuleBasedExtractor().extract(conversation)]


def test_rules_chinese():
    assert rules("我是Java后端开发者。我喜欢简洁的回答！每次提交前我总是先跑测试再推送。昨天我把服务迁移到了K8s。") == [
        ("FACT", "我是Java后端开发者"),
        ("PREFERENCE", "我喜欢简洁的回答"),
        ("PROCEDURE", "每次提交前我总是先跑测试再推送"),
        ("EPISODE", "昨天我把服务迁移到了K8s"),
    ]
    assert rules("我叫小王", "我在阿里巴巴工作", "请用中文回答", "我不喜欢太长的解释") == [
        ("FACT", "我叫小王"),
        ("FACT", "我在阿里巴巴工作"),
        ("PREFERENCE", "请用中文回答"),
        ("PREFERENCE", "我不喜欢太长的解释"),
    ]


def test_rules_english():
    assert rules(
        "I'm a data scientist. I prefer Python over R. I always run the linter before committing. "
        "Yesterday I upgraded to Node.js 22."
    ) == [
        ("FACT", "I'm a data scientist"),
        ("PREFERENCE", "I prefer Python over R"),
        ("PROCEDURE", "I always run the linter before committing"),
        ("EPISODE", "Yesterday I upgraded to Node.js 22"),
    ]
    assert rules("I work at Acme", "please always answer in English", "I don't like emojis") == [
        ("FACT", "I work at Acme"),
        ("PREFERENCE", "please always answer in English"),
        ("PREFERENCE", "I don't like emojis"),
    ]


def test_rules_ignore_assistant_questions_and_small_talk():
    assert rules("你好", "What is a closure?", "我是不是应该学Rust？", "Am I a good fit?", "thanks",
                 assistant="I am a helpful assistant. 我喜欢帮助你。") == []


def test_rules_do_not_repeat_a_sentence():
    assert rules("I like tea.", "I like tea.") == [("PREFERENCE", "I like tea")]


def test_long_conversations_keep_the_newest_turns(extractor, openai_server):
    openai_server.push_reply(content="[]")
    conversation = [{"role": "user", "content": "old " * 20000}, {"role": "user", "content": "newest turn"}]
    assert extractor.extract(conversation) == []
    sent = openai_server.chat_requests()[0]["messages"][1]["content"]
    assert "newest turn" in sent and len(sent) < 50_100


@pytest.mark.parametrize("text,kind", [
    ("My favourite drink is green tea.", "PREFERENCE"),
    ("My favorite editor is vim.", "PREFERENCE"),
    ("I no longer like coffee.", "PREFERENCE"),
    ("I switched to tea.", "PREFERENCE"),
    ("I moved to Berlin.", "FACT"),
    ("Please call me Robert.", "FACT"),
    ("我最喜欢的饮料是绿茶。", "PREFERENCE"),
    ("我不再喜欢喝咖啡了。", "PREFERENCE"),
    ("我改喝绿茶了。", "PREFERENCE"),
    ("我搬到北京了。", "FACT"),
    ("我转行做产品经理了。", "FACT"),
])
def test_rules_keep_slot_statements_that_change(text, kind):
    assert rules(text) == [(kind, text.rstrip("。."))]
