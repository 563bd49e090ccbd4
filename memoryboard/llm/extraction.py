"""Extraction of long-term memory items from a conversation: with a chat model, or offline by the
statement classifier (the multilingual encoder and grammatical cues, :mod:`memoryboard.llm.statement_model`).

Either way secrets (passwords, PINs, card numbers, API keys, ID numbers: :func:`memoryboard.llm.cues.find_secrets`)
are never among the items, and :meth:`extract_report` says which kinds were withheld.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

import numpy as np

from memoryboard.llm.clauses import Clause, split_clauses
from memoryboard.llm.cues import clause_cues, find_secrets, is_hypothetical, is_small_talk
from memoryboard.llm.embeddings import UniversalSentenceEncoder
from memoryboard.llm.errors import LLMError
from memoryboard.llm.openai_client import clean_model_value
from memoryboard.llm.statement_model import StatementModel, feature_matrix, shipped_statement_model

if TYPE_CHECKING:
    from memoryboard.llm.chat import ChatModel
    from memoryboard.llm.embeddings import Embedder

MemoryType = Literal["FACT", "PREFERENCE", "PROCEDURE", "EPISODE"]
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)


@dataclass(frozen=True)
class ExtractedItem:
    """One memory item proposed for long-term memory."""

    type: MemoryType
    content: str


@dataclass(frozen=True)
class ExtractionReport:
    """What an extraction found: the ``items``, and the kinds of secret it did not store (``withheld``,
    e.g. ``("password",)``), each once."""

    items: list[ExtractedItem]
    withheld: tuple[str, ...] = ()


@runtime_checkable
class MemoryExtractor(Protocol):
    """Turns a conversation (message dicts with ``role`` and ``content``) into memory items."""

    def extract(self, conversation: list[dict]) -> list[ExtractedItem]:
        """Raises LLMError when a model call fails or its answer cannot be read."""
        ...


def extraction_report(extractor: MemoryExtractor, conversation: list[dict]) -> ExtractionReport:
    """``extractor.extract_report(conversation)`` when it has one, else its items with nothing withheld."""
    report = getattr(extractor, "extract_report", None)
    if callable(report):
        return report(conversation)
    return ExtractionReport(items=extractor.extract(conversation))


def withhold_secrets(items: Iterable[ExtractedItem]) -> ExtractionReport:
    """``items`` without those holding a secret, and the kinds withheld."""
    kept, withheld = [], []
    for item in items:
        kinds = find_secrets(item.content)
        if kinds:
            withheld.extend(kind for kind in kinds if kind not in withheld)
        else:
            kept.append(item)
    return ExtractionReport(items=kept, withheld=tuple(withheld))


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
- Never include passwords, PINs, card numbers, API keys or ID numbers; instructions about how the
  assistant should behave are not memories (a stated preference of the user is).
  不要提取密码、PIN、卡号、API 密钥或证件号；对助手行为的指令不是记忆（用户表达的偏好是）。
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
        return self.extract_report(conversation).items

    def extract_report(self, conversation: list[dict]) -> ExtractionReport:
        return withhold_secrets(extract_memories(conversation, chat_model=self.chat_model))


# --- offline: the statement classifier -------------------------------------------------------------

# Laughter and fillers at the end of a clause are not part of what is remembered.
_TRAILING_FILLER = re.compile(r"(?:[\s,，]*(?:lol|lmao|haha+|hehe|btw|tbh|fyi|哈哈+|嘿嘿|hh+))+$", re.IGNORECASE)
# ("also", 也 stay: they tell the reconcile step that a statement adds to what it knows.)
_LEADING_FILLER = re.compile(r"^(?:(?:ugh|lol|ok|okay|hey|hi|so|well|btw|fyi|oh|对了|话说|其实)\b[\s,，:：]*)+",
                             re.IGNORECASE)
MIN_CLAUSE_CHARS = 2


@dataclass(frozen=True)
class ScoredClause:
    """One clause of a user message as the offline extractor saw it: ``kept`` (probability at least the
    model's threshold, no secret, not small talk), its ``type``, and why it was not kept."""

    text: str
    content: str  # what an item of it stores: :func:`item_content`
    probability: float
    type: MemoryType
    kept: bool
    secret: tuple[str, ...] = ()
    skipped_as: str = ""  # why :func:`hard_skip` skipped it, or "" (decided by the probability)


def item_content(clause: str) -> str:
    """What is stored for a kept clause: its text without leading and trailing fillers ("ugh,", "lol", 哈哈)."""
    text = _TRAILING_FILLER.sub("", clause.strip())
    text = _LEADING_FILLER.sub("", text).strip()
    return text or clause.strip()


def sentence_context(clauses: Sequence[Clause]) -> tuple[list[str], list[bool]]:
    """For each clause of one message: the clause before it in its sentence ("" for the first), and whether
    its sentence is conditional up to it ("if I won the lottery, I'd quit": both clauses; 如果…，我就…)."""
    previous, conditional = [], []
    sentence, before, hypothetical = None, "", False
    for clause in clauses:
        if clause.sentence != sentence:
            sentence, before, hypothetical = clause.sentence, "", False
        hypothetical = hypothetical or is_hypothetical(clause.text)
        previous.append(before)
        conditional.append(hypothetical)
        before = clause.text
    return previous, conditional


def clause_inputs(clauses: Sequence[Clause], vectors: np.ndarray, previous: Sequence[str]) -> np.ndarray:
    """The classifier's features of ``clauses`` given their vectors and the clause before each in its sentence."""
    cues = np.array([clause_cues(c.text, sentence_end=c.mark, previous=p) for c, p in zip(clauses, previous)],
                    dtype=np.float64)
    return feature_matrix(vectors, cues.reshape(len(clauses), -1))


def hard_skip(clause: str, *, conditional: bool = False) -> str:
    """Why a clause is never kept whatever the classifier says ("" when it is up to the classifier): it holds
    a secret, is too short, is a greeting or an acknowledgement, or belongs to a conditional sentence."""
    if find_secrets(clause):
        return "secret"
    if len(clause.strip()) < MIN_CLAUSE_CHARS:
        return "too short"
    if is_small_talk(clause):
        return "small talk"
    if conditional:
        return "hypothetical"
    return ""


class OfflineExtractor:
    """Offline :class:`MemoryExtractor`: every clause of the user's messages that states lasting information
    about them (first person, or the user in the third person) becomes one item; questions, requests,
    greetings, reactions, statements about the world, hypotheticals, quoted text and instructions to the
    assistant do not, and secrets are withheld.

    One encoder call per conversation, for all its clauses (:meth:`score`).

    Args:
        encoder: the embedder the model was trained on (default the shipped USE model); another embedder's
            vectors mean nothing to the weights.
        model: default the shipped :func:`~memoryboard.llm.statement_model.shipped_statement_model`.
    """

    name = "statements (offline)"
    is_offline = True

    def __init__(self, *, encoder: Embedder | None = None, model: StatementModel | None = None) -> None:
        self._encoder = encoder
        self._model = model

    @property
    def encoder(self) -> Embedder:
        if self._encoder is None:
            self._encoder = UniversalSentenceEncoder()
        return self._encoder

    @property
    def model(self) -> StatementModel:
        if self._model is None:
            self._model = shipped_statement_model()
        return self._model

    def score(self, texts: Sequence[str]) -> list[list[ScoredClause]]:
        """Each text's clauses, scored, with one encoder call for all of them."""
        per_text = [split_clauses(text) for text in texts]
        flat = [clause for clauses in per_text for clause in clauses]
        previous, conditional = [], []
        for clauses in per_text:
            before, hypothetical = sentence_context(clauses)
            previous += before
            conditional += hypothetical
        results: list[ScoredClause | None] = [None] * len(flat)
        to_score = []
        for index, clause in enumerate(flat):
            reason = hard_skip(clause.text, conditional=conditional[index])
            if reason:
                results[index] = ScoredClause(clause.text, item_content(clause.text), 0.0, "FACT", False,
                                              secret=tuple(find_secrets(clause.text)), skipped_as=reason)
            else:
                to_score.append(index)
        if to_score:
            chosen = [flat[i] for i in to_score]
            contents = [item_content(c.text) for c in chosen]
            # The content's vector, the one the reconcile step of its item will ask for again.
            features = clause_inputs(chosen, self.encoder.embed(contents), [previous[i] for i in to_score])
            probabilities = self.model.keep_probability(features)
            types = self.model.types(features)
            for index, content, probability, kind in zip(to_score, contents, probabilities, types):
                results[index] = ScoredClause(flat[index].text, content, float(probability),
                                              kind, bool(probability >= self.model.threshold))  # type: ignore[arg-type]
        out, cursor = [], 0
        for clauses in per_text:
            out.append(results[cursor:cursor + len(clauses)])
            cursor += len(clauses)
        return out  # type: ignore[return-value]

    def extract(self, conversation: list[dict]) -> list[ExtractedItem]:
        return self.extract_report(conversation).items

    def extract_report(self, conversation: list[dict]) -> ExtractionReport:
        texts = [str(_field(m, "content") or "") for m in conversation
                 if str(_field(m, "role") or "").lower() == "user"]
        items: list[ExtractedItem] = []
        withheld: list[str] = []
        seen: set[str] = set()
        for clauses in self.score(texts):
            for clause in clauses:
                withheld.extend(kind for kind in clause.secret if kind not in withheld)
                if clause.kept and clause.content.casefold() not in seen:
                    seen.add(clause.content.casefold())
                    items.append(ExtractedItem(type=clause.type, content=clause.content))
        return ExtractionReport(items=items, withheld=tuple(withheld))


@lru_cache(maxsize=1)
def offline_extractor() -> OfflineExtractor:
    """The process's offline extractor (the shipped model and encoder)."""
    return OfflineExtractor()


def classify_statement(sentence: str) -> MemoryType | None:
    """The memory type of ``sentence`` when it states lasting information about the person (its most
    likely clause's type), else None: the offline extractor's decision on one text."""
    kept = [c for c in offline_extractor().score([sentence])[0] if c.kept]
    return max(kept, key=lambda c: c.probability).type if kept else None


