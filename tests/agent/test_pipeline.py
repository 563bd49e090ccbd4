"""The before-model chain: ContextEditingInterceptor (30) and SummarizationHook (50)."""

from __future__ import annotations

import pytest

from memoryboard.agent.hooks import SUMMARY_PREFIX, SummarizationHook, head_and_tail
from memoryboard.agent.interceptors import (
    BEFORE_LLM_CALL,
    ChainContext,
    ContextEditingInterceptor,
    run_before_model_chain,
)
from memoryboard.agents_config import get_agents_config, reset_agents_config
from memoryboard.llm.chat import ChatReply
from memoryboard.llm.errors import LLMError
from memoryboard.strategies import total_tokens


def msgs(n, size=10):
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i:02d}" + "x" * size} for i in range(n)]


def tokens(messages):
    return total_tokens([m["content"] for m in messages])


class Recorder:
    def __init__(self, name, order, log, phase=BEFORE_LLM_CALL):
        self.name, self.order, self.log, self.phase = name, order, log, phase

    def intercept(self, messages, context):
        self.log.append(self.name)
        return messages


def test_chain_runs_by_order_and_phase():
    log = []
    steps = [Recorder("hook50", 50, log), Recorder("ctx30", 30, log), Recorder("other", 10, log, phase="AFTER"),
             Recorder("first", 5, log)]
    run_before_model_chain(steps, msgs(2), ChainContext(agent=None))
    assert log == ["first", "ctx30", "hook50"]
    assert ContextEditingInterceptor.order == 30 and SummarizationHook.order == 50
    assert SummarizationHook.phase == BEFORE_LLM_CALL


def trim_agent(settings, tmp_path):
    """An agent "t" whose context strategy is TRIM keeping the first message and the last two."""
    path = tmp_path / "agents.yaml"
    path.write_text("agent:\n  agents:\n    t: {context: {strategy: TRIM, params: {keep_first: 1, keep_last: 2}}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    return get_agents_config().get("t")


@pytest.mark.django_db
def test_context_editing_uses_the_agents_strategy_and_keeps_the_system_prompt(settings, tmp_path):
    agent = trim_agent(settings, tmp_path)
    messages = [{"role": "system", "content": "prompt"}] + msgs(10)
    original = [dict(m) for m in messages]
    context = ChainContext(agent=agent)
    out = ContextEditingInterceptor().intercept(messages, context)
    assert [m["content"][:3] for m in out] == ["pro", "m00", "m08", "m09"]
    assert messages == original  # the input is never modified
    assert context.notes == ["context: TRIM 10 -> 3 messages"]
    reset_agents_config()


@pytest.mark.django_db
def test_context_editing_default_composite_and_newest_message_always_kept():
    class Agent:
        context_strategy = "SLIDING_WINDOW"
        context_params = {"max_tokens": 10}

    big = msgs(3, size=100)
    out = ContextEditingInterceptor().intercept(big, ChainContext(agent=Agent()))
    assert out[-1] == big[-1]
    out = ContextEditingInterceptor().intercept(msgs(4), ChainContext(agent=None))  # COMPOSITE default
    assert [m["content"] for m in out] == [m["content"] for m in msgs(4)]


class FakeChat:
    name = "fake"
    is_offline = True

    def __init__(self, reply=None, error=None):
        self.reply, self.error, self.calls = reply, error, []

    def complete(self, messages, *, tools=None):
        self.calls.append(messages)
        if self.error:
            raise LLMError(self.error)
        return ChatReply(content=self.reply)


def long_conversation(total_chars=250_000, n=50):
    per = total_chars // n
    return [{"role": "system", "content": "prompt"}] + msgs(n, size=per) + [{"role": "user", "content": "the question"}]


def test_hook_does_nothing_under_the_threshold():
    chat = FakeChat(reply="summary")
    messages = msgs(10, size=1000)
    assert SummarizationHook(chat).intercept(messages, ChainContext(agent=None)) == messages
    assert chat.calls == []


def test_hook_threshold_is_80000_tokens():
    at = [{"role": "user", "content": "x" * int((80_000 - 4) * 2.5)}]
    assert tokens(at) == 80_000
    chat = FakeChat(reply="s")
    assert SummarizationHook(chat).intercept(at, ChainContext(agent=None)) == at
    over = at + [{"role": "user", "content": "y"}]
    SummarizationHook(chat).intercept(over, ChainContext(agent=None))
    assert len(chat.calls) == 1


def test_hook_llm_summary_replaces_the_middle():
    chat = FakeChat(reply="the user discussed Rust")
    messages = long_conversation()
    context = ChainContext(agent=None)
    hook = SummarizationHook(chat)
    out = hook.intercept(messages, context)
    assert [m["role"] for m in out] == ["system", "system", "user"]
    assert out[0]["content"] == "prompt" and out[-1]["content"] == "the question"
    assert out[1]["content"] == SUMMARY_PREFIX + "the user discussed Rust"
    assert len(chat.calls[0][1]["content"]) == 50_000
    assert "an LLM summary" in context.notes[0] and hook.last_action == "llm summary"


def test_hook_llm_failure_keeps_head_and_tail():
    messages = long_conversation()
    out = SummarizationHook(FakeChat(error="timeout")).intercept(messages, ChainContext(agent=None))
    middle = out[1]["content"]
    assert middle.startswith("USER: m00") and middle.endswith(messages[-2]["content"][-1000:])
    assert "characters omitted" in middle and len(middle) < 2_100
    assert out[-1]["content"] == "the question"


def test_hook_rejects_a_summary_longer_than_its_input():
    messages = [{"role": "system", "content": "p"}, {"role": "user", "content": "a" * 210_000},
                {"role": "user", "content": "q"}]
    hook = SummarizationHook(FakeChat(reply="z" * 300_000))
    out = hook.intercept(messages, ChainContext(agent=None))
    assert hook.last_action == "fallback: summary longer than its input"
    assert "characters omitted" in out[1]["content"] and "z" not in out[1]["content"]


def test_hook_without_model_hard_cuts_to_the_budget():
    messages = long_conversation()
    hook = SummarizationHook(None)
    out = hook.intercept(messages, ChainContext(agent=None))
    assert hook.last_action == "hard cut"
    assert tokens(out) <= 80_000
    assert out[0]["content"] == "prompt" and out[-1]["content"] == "the question"
    assert out[1:-1] == messages[-1 - (len(out) - 2):-1]  # the newest messages, whole, in order


def test_hard_cut_of_a_single_huge_message_keeps_its_end():
    messages = [{"role": "user", "content": "a" * 300_000 + "the question"}]
    out = SummarizationHook(None).intercept(messages, ChainContext(agent=None))
    assert tokens(out) <= 80_000 and out[0]["content"].endswith("the question")


def test_head_and_tail():
    assert head_and_tail("short") == "short"
    text = "a" * 1000 + "b" * 500 + "c" * 1000
    cut = head_and_tail(text)
    assert cut.startswith("a" * 1000) and cut.endswith("c" * 1000) and "500 characters omitted" in cut


@pytest.mark.django_db
def test_context_notes_are_in_the_readers_language(settings, tmp_path):
    from django.utils import translation

    agent = trim_agent(settings, tmp_path)
    messages = [{"role": "system", "content": "prompt"}] + msgs(10)
    context = ChainContext(agent=agent)
    with translation.override("zh-hans"):
        ContextEditingInterceptor().intercept(messages, context)
    assert context.notes == ["上下文：TRIM 将 10 条消息变为 3 条"]
    reset_agents_config()


@pytest.mark.django_db
@pytest.mark.parametrize("language, expected", [
    ("en", "context: SUMMARIZE fell back: the summarizer failed (HTTP 500), so only the first 3 messages were kept"),
    ("zh-hans", "上下文：SUMMARIZE 已降级：总结失败（HTTP 500），因此只保留了前 3 条消息"),
])
def test_a_summarizer_failure_note_is_in_the_readers_language(openai_settings, language, expected):
    from django.utils import translation

    openai_settings.set_fault("http500")
    messages = [{"role": "system", "content": "prompt"}] + msgs(12)
    context = ChainContext(agent=get_agents_config().get("chat"))
    with translation.override(language):
        ContextEditingInterceptor("SUMMARIZE", {"threshold": 5, "keep_last": 3}).intercept(messages, context)
    assert expected in context.notes


@pytest.mark.parametrize("language, expected", [
    ("en", "emergency compression (the oldest messages cut): "),
    ("zh-hans", "紧急压缩（裁掉了最早的消息）："),
])
def test_the_emergency_compression_note_is_in_the_readers_language(language, expected):
    from django.utils import translation

    context = ChainContext(agent=None)
    with translation.override(language):
        SummarizationHook(None).intercept(long_conversation(), context)
    assert context.notes[0].startswith(expected), context.notes
