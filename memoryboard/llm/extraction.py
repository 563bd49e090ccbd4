"""Extraction of long-term memory items from a conversation: with a chat model, or by rules offline."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

from memoryboard.llm.errors import LLMError
from memoryboard.llm.openai_client import clean_model_value

if TYPE_CHECKING:
    from memoryboard.llm.chat import ChatModel

MemoryType = Literal["FACT", "PREFERENCE", "PROCEDURE", "EPISODE"]
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)


@dataclass(frozen=True)
class ExtractedItem:
    """One memory item proposed for long-term memory."""

    type: MemoryType
    content: str


@runtime_checkable
class MemoryExtractor(Protocol):
    """Turns a conversation (message dicts with ``role`` and ``content``) into memory items."""

    def extract(self, conversation: list[dict]) -> list[ExtractedItem]:
        """Raises LLMError when a model call fails or its answer cannot be read."""
        ...


EXTRACTION_PROMPT = """\
You extract long-term memories about the USER from a conversation.
从对话中提取关于【用户】的长期记忆。

Return ONLY a JSON array, no prose. Each element: {"type": "...", "content": "..."}.
只返回一个 JSON 数组，不要其他文字。每个元素：{"type": "...", "content": "..."}。

Types / 类型:
- FACT: stable facts about the user (identity, job, skills) / 稳定的事实（身份、职业、技能）
- PREFERENCE: likes, dislikes, preferred styles / 偏好、喜好、风格
- PROCEDURE: habits and workflows / 习惯与工作流程
- EPISODE: time-bound events / 有时效的事件

Rules / 规则:
- Only information stated by the user about themselves; ignore the assistant's claims.
  只提取用户关于自己的信息，忽略助手的内容。
- One short, self-contained sentence per item, in the language of the conversation.
  每条一句简短、独立的话，使用对话的语言。
- Nothing worth remembering: return [].  没有值得记住的内容时返回 []。
"""


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def _transcript(conversation: Iterable[Any]) -> str:
    lines = []
    for message in conversation:
        role = str(_field(message, "role") or "").lower()
        if role not in {"user", "assistant"}:
            continue
        content = _field(message, "content")
        if content:
            lines.append(f"{role}: {content}")
    return "\n".join(lines)


# The newest turns matter most; a transcript beyond this is cut from the start.
MAX_TRANSCRIPT_CHARS = 50_000

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_extraction(text: str) -> list[ExtractedItem]:
    """Read a model's answer: a JSON array of ``{"type", "content"}``, possibly fenced or wrapped.

    Accepts `````json`` fences, an object with a ``"memories"`` (or ``"items"``) key, and prose around
    the array. Items with an unknown type or without content are dropped.

    Raises:
        LLMError: ``"malformed response"`` when no such JSON can be found.
    """
    text = (text or "").strip()
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1).strip()] if fenced else []
    candidates.append(text)
    for opener, closer in (("[", "]"), ("{", "}")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    data: Any = None
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        break
    else:
        raise LLMError("malformed response", "the extraction answer is not JSON")
    data = clean_model_value(data)

    if isinstance(data, dict):
        for key in ("memories", "items", "data"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            if "type" in data and "content" in data:
                data = [data]
    if not isinstance(data, list):
        raise LLMError("malformed response", "the extraction answer is not a JSON array")

    items: list[ExtractedItem] = []
    for element in data:
        if not isinstance(element, dict):
            continue
        kind = str(element.get("type") or "").strip().upper()
        content = element.get("content")
        if kind in MEMORY_TYPES and isinstance(content, str) and content.strip():
            items.append(ExtractedItem(type=kind, content=content.strip()))  # type: ignore[arg-type]
    return items


def extract_memories(conversation: list[dict], *, chat_model: ChatModel) -> list[ExtractedItem]:
    """Extract memory items from ``conversation`` with one call of ``chat_model``.

    Args:
        conversation: message dicts (or objects) with ``role`` and ``content``.
        chat_model: any :class:`~memoryboard.llm.chat.ChatModel`.

    Returns:
        The items, possibly empty.

    Raises:
        LLMError: the call failed, or ``"malformed response"`` when the answer is not the JSON asked for.
    """
    transcript = _transcript(conversation)[-MAX_TRANSCRIPT_CHARS:]
    if not transcript:
        return []
    reply = chat_model.complete(
        [
            {"role": "system", "content": EXTRACTION_PROMPT},
            {"role": "user", "content": f"Conversation / 对话:\n{transcript}"},
        ]
    )
    return parse_extraction(reply.content)


class LLMExtractor:
    """:class:`MemoryExtractor` that asks a chat model (see :func:`extract_memories`)."""

    def __init__(self, chat_model: ChatModel) -> None:
        self.chat_model = chat_model
        self.name = f"llm:{chat_model.name}"
        self.is_offline = chat_model.is_offline

    def extract(self, conversation: list[dict]) -> list[ExtractedItem]:
        return extract_memories(conversation, chat_model=self.chat_model)


# --- offline rules ------------------------------------------------------------------------------

# Checked in this order: the more specific kinds first.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "PROCEDURE",
        re.compile(
            r"每次.*(?:先|都)|总是先.*(?:再|然后)|习惯先.*再|我的(?:工作)?流程"
            r"|\balways\b.*\bbefore\b|\bmy (?:usual )?workflow\b|\bI (?:usually|always) (?:start|begin) (?:by|with)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "EPISODE",
        re.compile(
            r"今天|昨天|前天|上周|上个月|刚刚|刚才"
            r"|\b(?:today|yesterday|last (?:week|month|night|year)|just now|this morning)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "PREFERENCE",
        re.compile(
            r"我(?:很|比较|更|最)?喜欢|我(?:更)?偏好|我更喜欢|我不喜欢|我讨厌|请(?:用|使用|总是|始终)"
            r"|我(?:已经|现在)?不再(?:喜欢|爱|喝|吃|用)|我(?:现在)?(?:改喝|改用|换成|爱喝|爱吃)"
            r"|\bI (?:really |much )?(?:prefer|like|love|hate|enjoy)\b|\bI (?:don't|do not) like\b"
            r"|\bmy (?:favou?rite|preferred) \w+|\bI no longer (?:like|love|enjoy|drink|eat|use)\b"
            r"|\bI(?:'ve| have)? switched (?:from \S+ )?to\b"
            r"|\bplease (?:always|use|answer|reply)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "FACT",
        re.compile(
            r"我是(?!不是|说|在问)|我叫|我在.{1,30}?(?:工作|上班|上学|读书)|我住在|我的名字是|我来自|我从事"
            r"|我(?:已经|刚|刚刚|最近)?(?:搬到|搬去|搬家到|搬回)|我(?:已经)?转行|我(?:已经)?不再(?:住在|在)"
            r"|\bI(?:'ve| have)? (?:just )?(?:moved|relocated) to\b|\bI no longer (?:live|work)\b|\bcall me\b"
            r"|\bI am (?:a|an|from|based)\b|\bI'm (?:a|an|from|based)\b|\bI work\b|\bmy name is\b"
            r"|\bI live in\b|\bI (?:am|'m) (?:working|studying) (?:at|as|in)\b",
            re.IGNORECASE,
        ),
    ),
)

# Sentence ends; the English full stop only before whitespace, so "Node.js" stays whole.
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)(?=\s)")


def classify_statement(sentence: str) -> MemoryType | None:
    """The memory type a self-statement matches by the offline rules, or None."""
    for kind, pattern in _RULES:
        if pattern.search(sentence):
            return kind  # type: ignore[return-value]
    return None


class RuleBasedExtractor:
    """Offline :class:`MemoryExtractor`: regular expressions over the user's sentences (Chinese, English).

    Only USER messages are read; questions are skipped; each matching sentence becomes one item.
    """

    name = "rules"
    is_offline = True

    def extract(self, conversation: list[dict]) -> list[ExtractedItem]:
        items: list[ExtractedItem] = []
        seen: set[str] = set()
        for message in conversation:
            if str(_field(message, "role") or "").lower() != "user":
                continue
            for sentence in _SENTENCE_SPLIT.split(str(_field(message, "content") or "")):
                sentence = sentence.strip()
                if len(sentence) < 3 or sentence.endswith(("?", "？", "吗")) or sentence in seen:
                    continue
                kind = classify_statement(sentence)
                if kind:
                    seen.add(sentence)
                    items.append(ExtractedItem(type=kind, content=sentence.rstrip("。.!！;； ")))
        return items
