"""The summarizer interface, the prompts, and the offline extractive summarizer."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .messages import Message

__all__ = [
    "CONTEXT_SUMMARY_INSTRUCTION",
    "MEMORY_SUMMARY_INSTRUCTION",
    "MAX_CONVERSATION_CHARS",
    "Summarizer",
    "OfflineSummarizer",
    "conversation_text",
    "transcript_line",
]

MAX_CONVERSATION_CHARS = 50_000

CONTEXT_SUMMARY_INSTRUCTION = (
    "请总结以下对话的关键信息，保持上下文连贯，保留后续对话需要的事实、决定、待办事项和未解决的问题。\n"
    "Summarize the key information of the following conversation, keeping continuity: keep the facts, "
    "decisions, open tasks and unresolved questions that the rest of the conversation needs."
)

MEMORY_SUMMARY_INSTRUCTION = (
    "请从以下对话中提取用户的偏好、习惯和重要事实，作为长期记忆保存。\n"
    "Extract the user's preferences, habits and important facts from the following conversation, "
    "for long-term memory."
)


@runtime_checkable
class Summarizer(Protocol):
    """Anything that turns a conversation text into a summary.

    Attributes:
        name: Shown in the UI, e.g. ``"offline-extractive"`` or the chat model's name.
        is_offline: ``True`` if no network model is used (the UI says so).
    """

    name: str
    is_offline: bool

    def summarize(self, text: str, *, instruction: str) -> str:
        """Summarize ``text`` following ``instruction``.

        Raises:
            SummarizerError: If no summary could be produced.
        """
        ...


def transcript_line(m: Message) -> str:
    """One message as a ``ROLE: content`` line; tool calls follow as ``[tool call name(arguments)]``, and a
    turn that carries tool results (an OpenAI ``tool`` message, an Anthropic ``tool_result`` turn) is ``TOOL``."""
    role = "TOOL" if m.result_ids else m.role.value
    line = f"{role}: {m.content}"
    if m.tool_calls:
        calls = " ".join(f"[tool call {c.name}({c.arguments})]" for c in m.tool_calls)
        line = f"{line} {calls}" if m.content else f"{line}{calls}"
    return line


def conversation_text(messages: Iterable[Message]) -> str:
    """Join messages as ``ROLE: content`` lines, the text given to a summarizer.

    Example:
        >>> from memoryboard.strategies import Message, Role
        >>> conversation_text([Message(Role.USER, "hi"), Message(Role.ASSISTANT, "hello")])
        'USER: hi\\nASSISTANT: hello'
    """
    return "\n".join(transcript_line(m) for m in messages)


_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")
_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]+")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_ROLE_PREFIX = re.compile(r"^(SYSTEM|USER|ASSISTANT|TOOL):\s*")
_STOPWORDS = frozenset(
    "the a an and or but is are was were be been to of in on at for with it this that you i me my we "
    "your our they he she them his her its as by from not no yes do does did so if then than there here "
    "what which who how can could would should will just ok okay have has had am system user assistant tool "
    "的 了 是 我 你 他 她 它 们 在 和 就 也 都 吗 呢 吧 啊 这 那 有 个".split()
)
# Sentences that state something about the user are what long-term memory wants.
_MEMORY_CUES = re.compile(
    r"\b(i am|i'm|my|i like|i prefer|i usually|i always|i never|i use|i work|i live|prefer|favorite)\b"
    r"|我是|我叫|我喜欢|我偏好|我习惯|我一般|我通常|我总是|我从不|我在|我的|喜欢|偏好|习惯",
    re.IGNORECASE,
)


_TOOL_CALL = re.compile(r"\[tool call ([^\s(\]]+)\(")
_TOOL_CALL_TEXT = re.compile(r"\[tool call [^\s(\]]+\(.*?\)\](?=\s*\[tool call |\s*$)")


def _tool_line(calls: Counter, results: int) -> str:
    """``TOOLS: search ×3, fetch ×1; 4 results`` (empty without tool traffic)."""
    if not calls and not results:
        return ""
    named = ", ".join(f"{name} ×{n}" for name, n in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0])))
    parts = [named] if named else []
    if results:
        parts.append(f"{results} result{'s' if results != 1 else ''}")
    return "TOOLS: " + "; ".join(parts)


def _terms(sentence: str) -> list[str]:
    lowered = sentence.lower()
    terms = [w for w in _WORD.findall(lowered) if w not in _STOPWORDS]
    for run in _CJK_RUN.findall(lowered):
        if len(run) == 1:
            if run not in _STOPWORDS:
                terms.append(run)
        else:
            terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms


class OfflineSummarizer:
    """Extractive summarizer: no network, deterministic, works for Chinese and English.

    Sentences are scored by the average corpus frequency of their terms (words and CJK bigrams); the best
    ones are kept, in their original order, within ``min(max_chars, len(text) // 3)`` characters (at least
    one sentence is always kept). With :data:`MEMORY_SUMMARY_INSTRUCTION`, user sentences that state a
    preference, habit or fact about the user ("I prefer", "我是", ...) rank before all others.

    Example:
        >>> OfflineSummarizer().summarize("USER: I like tea.", instruction=CONTEXT_SUMMARY_INSTRUCTION)
        'USER: I like tea.'
    """

    name = "offline-extractive"
    is_offline = True

    def __init__(self, max_chars: int = 1200) -> None:
        self.max_chars = max_chars

    def summarize(self, text: str, *, instruction: str) -> str:
        lines: list[tuple[str, str]] = []  # (role prefix, sentence)
        calls: Counter[str] = Counter()
        results = 0
        for line in text.splitlines():
            match = _ROLE_PREFIX.match(line)
            prefix = match.group(0) if match else ""
            body = line[len(prefix) :]
            # Tool traffic (arguments, JSON results) is no prose to extract from: it is counted instead.
            if prefix.startswith("TOOL"):
                results += 1
                continue
            calls.update(_TOOL_CALL.findall(body))
            body = _TOOL_CALL_TEXT.sub("", body)
            for sentence in _SENTENCE_END.split(body):
                sentence = sentence.strip()
                if sentence:
                    lines.append((prefix, sentence))
        tools = _tool_line(calls, results)
        if not lines:
            return tools
        term_lists = [_terms(s) for _, s in lines]
        frequency = Counter(t for terms in term_lists for t in set(terms))
        memory_mode = instruction == MEMORY_SUMMARY_INSTRUCTION
        scored = []
        for position, ((prefix, sentence), terms) in enumerate(zip(lines, term_lists)):
            score = sum(frequency[t] for t in terms) / math.sqrt(len(terms) + 1)
            cue = memory_mode and prefix.startswith("USER") and bool(_MEMORY_CUES.search(sentence))
            scored.append((not cue, -score, position))
        scored.sort()
        budget = max(1, min(self.max_chars, len(text) // 3))
        chosen: list[int] = []
        seen: set[frozenset[str]] = set()
        used = 0
        for _, _, position in scored:
            prefix, sentence = lines[position]
            # Repeated sentences add nothing to a summary; keep only the first of each.
            key = frozenset(term_lists[position]) or frozenset((sentence,))
            if key in seen:
                continue
            cost = len(prefix) + len(sentence) + 1
            if chosen and used + cost > budget:
                continue
            chosen.append(position)
            seen.add(key)
            used += cost
        chosen.sort()
        out = "\n".join(lines[p][0] + lines[p][1] for p in chosen)
        if tools:
            out = f"{out}\n{tools}"
        if len(out) > self.max_chars:
            out = out[: self.max_chars - 1] + "…"
        return out
