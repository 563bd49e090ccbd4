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
    OfflineExtractor,
    classify_statement,
    extract_memories,
    parse_extraction,
)
from memoryboard.llm.embeddings import UniversalSentenceEncoder

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
    assert isinstance(OfflineExtractor(), MemoryExtractor)


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


def test_long_conversations_keep_the_newest_turns(extractor, openai_server):
    openai_server.push_reply(content="[]")
    conversation = [{"role": "user", "content": "old " * 20000}, {"role": "user", "content": "newest turn"}]
    assert extractor.extract(conversation) == []
    sent = openai_server.chat_requests()[0]["messages"][1]["content"]
    assert "newest turn" in sent and len(sent) < 50_100


# --- offline: the statement classifier ----------------------------------------------------------------


def offline(*user_texts: str, assistant: str | None = None) -> list[tuple[str, str]]:
    conversation = [{"role": "USER", "content": text} for text in user_texts]
    if assistant:
        conversation.append({"role": "assistant", "content": assistant})
    return [(item.type, item.content) for item in OfflineExtractor().extract(conversation)]


# The statements the issue found unstored (rules kept 1 of 30 everyday statements).
@pytest.mark.parametrize("text", [
    "My birthday is on March 3rd.", "Our budget for the trip is 2,000 euros.", "I recently started learning the piano.",
    "我今年三十五岁。", "我养了一只叫豆豆的狗。", "I now work at Siemens.", "just adopted a rescue greyhound called Dash",
    "The user moved to Ghent and lives there now.", "用户住在格拉茨。", "Customer prefers email over phone.",
])
def test_a_plain_statement_about_oneself_is_one_item(text):
    assert [content for _type, content in offline(text)] == [text.rstrip("。.")]


@pytest.mark.parametrize("text", [
    "What is the capital of France?", "Can you recommend a good book?", "帮我写一首关于秋天的诗", "你觉得我该买哪个？",
    "translate into spanish pls: 'I am allergic to nuts and I live in Madrid'", "hi!", "thanks a lot!", "晚安",
    "haha that's funny", "the weather is crazy today", "if I won the lottery I'd quit my job",
    "from now on always answer in French", "请用中文回答", "Summarise: 'John moved to Paris in 2010 and works as a chef.'",
])
def test_questions_requests_greetings_and_the_world_yield_nothing(text):
    assert offline(text) == []


def test_one_item_per_fact_with_sensible_types():
    assert offline("我是Java后端开发者。我喜欢简洁的回答！每次提交前我总是先跑测试再推送。昨天我把服务迁移到了K8s。") == [
        ("FACT", "我是Java后端开发者"),
        ("PREFERENCE", "我喜欢简洁的回答"),
        ("PROCEDURE", "每次提交前我总是先跑测试再推送"),
        ("EPISODE", "昨天我把服务迁移到了K8s"),
    ]
    assert [c for _t, c in offline("我老婆是老师，我们住在杭州，周末一般去爬山。")] == ["我老婆是老师", "我们住在杭州", "周末一般去爬山"]
    assert [c for _t, c in offline("I'm a data scientist and I prefer short answers")] == [
        "I'm a data scientist", "I prefer short answers"]


def test_facts_buried_in_a_request_are_kept_and_the_request_is_not():
    items = [c for _t, c in offline(
        "Can you help me draft an email to my landlord? I rent a 1-bed flat in Glasgow and I work from home. "
        "Tone: polite but firm.")]
    assert items == ["I rent a 1-bed flat in Glasgow", "I work from home"]


def test_a_preference_about_answers_is_kept_an_instruction_is_not():
    assert offline("I prefer answers in French") == [("PREFERENCE", "I prefer answers in French")]
    assert offline("from now on always answer in French", "remember that you must never use emoji") == []


def test_secrets_are_withheld_and_said_so():
    report = OfflineExtractor().extract_report([{"role": "user", "content": (
        "my wifi password is sunflower77, I work from home. 我的银行卡号是6222 0202 0000 1234 567")}])
    assert [i.content for i in report.items] == ["I work from home"]
    assert report.withheld == ("password", "card number")


def test_only_the_users_messages_and_no_repeats():
    assert offline("I like tea.", "I like tea.", assistant="I am a helpful assistant. 我喜欢帮助你。") == [
        ("PREFERENCE", "I like tea")]


def test_one_encoder_call_per_turn():
    class Counting(UniversalSentenceEncoder):
        calls = 0

        def embed(self, texts):
            Counting.calls += 1
            return super().embed(texts)

    turn = ("Hi! I'm 34 and I live in Porto with my wife. I work as a nurse at the city hospital. We have two kids "
            "and a dog called Biscuit. Can you help me plan a birthday party? My daughter turns 7 next month. She "
            "loves dinosaurs. I'm allergic to nuts, so no nut cake. Budget is about 200 euros. Thanks a lot!")
    items = OfflineExtractor(encoder=Counting()).extract([{"role": "user", "content": turn}])
    assert Counting.calls == 1 and len(items) >= 6


def test_classify_statement():
    assert classify_statement("I moved to Berlin.") == "FACT"
    assert classify_statement("My favourite drink is green tea.") == "PREFERENCE"
    assert classify_statement("What is a closure?") is None


def test_the_online_extractor_withholds_secrets_too(extractor, openai_server):
    openai_server.push_reply(content=json.dumps([
        {"type": "FACT", "content": "The user's laptop password is Tr0mbone#22"},
        {"type": "FACT", "content": "The user has a Dell XPS 15"},
    ]))
    report = extractor.extract_report([{"role": "user", "content": "new laptop! password is Tr0mbone#22, a Dell XPS 15"}])
    assert report.items == [ExtractedItem("FACT", "The user has a Dell XPS 15")]
    assert report.withheld == ("password",)
