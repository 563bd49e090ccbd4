from __future__ import annotations

from memoryboard.strategies import (
    CONTEXT_SUMMARY_INSTRUCTION,
    MEMORY_SUMMARY_INSTRUCTION,
    Message,
    OfflineSummarizer,
    Role,
    Summarizer,
    conversation_text,
)


def test_conversation_text():
    text = conversation_text([Message(Role.USER, "hi"), Message(Role.ASSISTANT, "hello")])
    assert text == "USER: hi\nASSISTANT: hello"


def test_instructions_are_bilingual():
    for instruction in (CONTEXT_SUMMARY_INSTRUCTION, MEMORY_SUMMARY_INSTRUCTION):
        assert any("\u4e00" <= ch <= "\u9fff" for ch in instruction)
    assert "continuity" in CONTEXT_SUMMARY_INSTRUCTION
    assert "preferences" in MEMORY_SUMMARY_INSTRUCTION and "long-term memory" in MEMORY_SUMMARY_INSTRUCTION


def test_offline_summarizer_is_deterministic_bounded_and_extractive():
    summarizer = OfflineSummarizer()
    assert isinstance(summarizer, Summarizer) and summarizer.is_offline
    lines = []
    for i in range(200):
        lines.append(f"USER: Question {i} about the Django migration plan for the billing service.")
        lines.append(f"ASSISTANT: 我们讨论了数据库迁移方案 {i}。The migration needs a maintenance window {i}.")
    text = "\n".join(lines)
    first = summarizer.summarize(text, instruction=CONTEXT_SUMMARY_INSTRUCTION)
    assert first == summarizer.summarize(text, instruction=CONTEXT_SUMMARY_INSTRUCTION)
    assert 0 < len(first) <= 1200
    for line in first.splitlines():
        role, _, sentence = line.partition(": ")
        assert role in {"USER", "ASSISTANT"} and sentence in text


def test_offline_summarizer_short_and_empty_input():
    summarizer = OfflineSummarizer()
    assert summarizer.summarize("", instruction=CONTEXT_SUMMARY_INSTRUCTION) == ""
    assert summarizer.summarize("USER: 你好", instruction=CONTEXT_SUMMARY_INSTRUCTION) == "USER: 你好"


def test_offline_summarizer_memory_mode_prefers_user_facts():
    text = "\n".join(
        ["ASSISTANT: Here is the weather report for today and tomorrow in detail."] * 3
        + ["USER: I prefer answers with Python code examples.", "USER: 我是Java后端开发者。"]
        + [f"ASSISTANT: Paragraph {i} of the weather report for today." for i in range(20)]
    )
    summary = OfflineSummarizer(max_chars=120).summarize(text, instruction=MEMORY_SUMMARY_INSTRUCTION)
    assert "I prefer answers with Python code examples." in summary
    assert "我是Java后端开发者。" in summary


def test_offline_summary_of_a_tool_heavy_trace_is_prose_and_a_tool_count():
    from memoryboard.strategies import apply_context

    messages = [{"role": "user", "content": "Find the Redis eviction docs. I need LRU details."}]
    for n in range(6):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "search_docs", "arguments": '{"q": "lru"}'}}]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": '{"results": [{"title": "Eviction", "score": 0.9}]}'},
        ]
    messages += [{"role": "assistant", "content": "Redis supports allkeys-lru. Use it for a pure cache."},
                 {"role": "user", "content": "thanks"}, {"role": "assistant", "content": "You're welcome."}]
    result = apply_context("summarize", messages, {"threshold": 4, "keep_last": 2})
    summary = result.messages[0].content
    assert result.summarized and "{" not in summary and '"results"' not in summary
    assert "Find the Redis eviction docs." in summary
    assert "TOOLS: search_docs ×6; 6 results" in summary
