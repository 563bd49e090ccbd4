"""Result objects of the strategies; the API and the playground render these and nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .formats import write_messages
from .messages import Message

__all__ = ["COMPACT_LIMIT", "ContextResult", "Fallback", "MemoryPlan", "index_ranges", "saved_ratio"]

COMPACT_LIMIT = 1000
"""Above this many entries, an index list of the API answer is given only as ranges (``<name>_ranges``)."""


def index_ranges(indexes: tuple[int, ...] | list[int]) -> list[list[int]]:
    """Sorted indexes as ``[first, last]`` runs (both inclusive).

    Example:
        >>> index_ranges([0, 1, 2, 5, 7, 8])
        [[0, 2], [5, 5], [7, 8]]
    """
    out: list[list[int]] = []
    for i in indexes:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def saved_ratio(tokens_before: float, tokens_after: float) -> float:
    """Share of tokens saved, clamped to ``0..1`` (a summary longer than its input saves nothing)."""
    if tokens_before <= 0:
        return 0.0
    return round(min(1.0, max(0.0, 1 - tokens_after / tokens_before)), 4)


@dataclass(frozen=True)
class Fallback:
    """Why a strategy fell back, as a code and its numbers (a reader's language says it from these); its
    English text (``str()``) is what the API gives as ``fallback``.

    Attributes:
        code: ``"kept_first"`` (a context SUMMARIZE kept only the first ``kept`` messages) or
            ``"nothing_deleted"`` (a memory SUMMARIZE plan deletes nothing).
        failure: What the summarizer did: ``"error"`` (it raised; ``detail`` is its message), ``"empty"``
            (an empty summary) or ``"not_text"`` (``detail`` names the type it returned).
        detail: The summarizer's own words, or the returned type's name.
        kept: The first messages kept (``kept_first``).

    Example:
        >>> str(Fallback("kept_first", "error", "timeout", kept=3))
        'summarizer failed: timeout; kept the first 3 messages'
    """

    code: str
    failure: str
    detail: str = ""
    kept: int = 0

    @property
    def failure_text(self) -> str:
        if self.failure == "empty":
            return "summarizer returned an empty summary"
        if self.failure == "not_text":
            return f"summarizer returned {self.detail}, not text"
        return self.detail

    def __str__(self) -> str:
        if self.code == "nothing_deleted":
            return f"summarizer failed: {self.failure_text}; nothing deleted"
        return f"summarizer failed: {self.failure_text}; kept the first {self.kept} messages"


@dataclass(frozen=True)
class ContextResult:
    """What a context strategy did.

    Attributes:
        strategy: Canonical strategy name, e.g. ``"TRIM"``.
        messages: The output messages (input messages are reused, never copied or mutated).
        sources: For each output message, the input index it came from; ``None`` for a produced summary.
        kept: Input indexes present in the output, sorted.
        dropped: Input indexes removed, sorted.
        summarized: Input indexes replaced by a summary that is in the output, sorted.
        cleared: Input indexes in the output with their tool result content replaced by a placeholder
            (CLEAR_TOOL_RESULTS), sorted. Every input index is in exactly one of ``kept``, ``dropped``,
            ``summarized``, ``cleared``.
        tokens_before: Estimated tokens of the input.
        tokens_after: Estimated tokens of the output.
        llm_calls: Summarizer calls made, failed attempts included.
        fallback_reason: Why a fallback fired (:class:`Fallback`), else ``None``; ``fallback`` is its
            English text.
        steps: For COMPOSITE, each step's own result (indexes relative to that step's input).
        format: The input's format (``"openai"`` or ``"anthropic"``); :meth:`to_dict` answers in it.
        system: Anthropic's top-level system prompt, given back as it came (``None`` if absent).
        summary_cache: ``"reused"`` (a cached summary, no LLM call), ``"extended"`` (a cached summary plus
            the new messages summarized), ``"new"`` (summarized and stored), or ``None`` (no cache).
    """

    strategy: str
    messages: tuple[Message, ...]
    sources: tuple[int | None, ...]
    kept: tuple[int, ...]
    dropped: tuple[int, ...]
    summarized: tuple[int, ...]
    tokens_before: float
    tokens_after: float
    llm_calls: int = 0
    fallback_reason: Fallback | None = None
    steps: tuple[ContextResult, ...] = ()
    cleared: tuple[int, ...] = ()
    format: str = "openai"
    system: Any = None
    summary_cache: str | None = None

    @property
    def saved_ratio(self) -> float:
        return saved_ratio(self.tokens_before, self.tokens_after)

    @property
    def fallback(self) -> str | None:
        """Short reason when a fallback fired (English), else ``None``."""
        return None if self.fallback_reason is None else str(self.fallback_reason)

    def output(self) -> list[Any]:
        """The output messages in the input's format: a kept message is the very object it was read from."""
        return write_messages(self.messages, self.format)

    def to_dict(self) -> dict[str, Any]:
        """The API shape of ``POST /api/v1/strategies/context/{name}/apply``.

        ``kept``, ``dropped``, ``summarized`` and ``cleared`` are lists of input indexes; one holding more
        than :data:`COMPACT_LIMIT` entries is left out and given as ``<name>_ranges`` (``[first, last]``
        runs) instead, so that a 100k-message answer does not spell out every dropped index.
        """
        data: dict[str, Any] = {"strategy": self.strategy, "format": self.format, "messages": self.output()}
        if self.system is not None:
            data["system"] = self.system
        for name in ("kept", "dropped", "summarized", "cleared"):
            indexes = getattr(self, name)
            if len(indexes) > COMPACT_LIMIT:
                data[f"{name}_ranges"] = index_ranges(indexes)
            else:
                data[name] = list(indexes)
        data.update(
            tokens_before=round(self.tokens_before, 1),
            tokens_after=round(self.tokens_after, 1),
            llm_calls=self.llm_calls,
            fallback=self.fallback,
            saved_ratio=self.saved_ratio,
        )
        if self.summary_cache is not None:
            data["summary_cache"] = self.summary_cache
        return data


@dataclass(frozen=True)
class MemoryPlan:
    """What a memory strategy would do to the stored rows of one conversation (a dry run).

    Applying it (elsewhere, in one transaction) deletes ``delete_ids`` then inserts ``inserts``.

    Attributes:
        strategy: Canonical strategy name, e.g. ``"DELETE"``.
        delete_ids: Row ids to delete, ascending.
        inserts: Rows to insert; a summary reuses the smallest deleted id so it sorts in place.
        keep_ids: Row ids left untouched, ascending.
        llm_calls: Summarizer calls made, failed attempts included.
        fallback_reason: Why a fallback fired (:class:`Fallback`), else ``None``; ``fallback`` is its
            English text.
        tokens_before: Estimated tokens of the rows before.
        tokens_after: Estimated tokens of the rows after the plan is applied.
    """

    strategy: str
    delete_ids: tuple[int, ...]
    inserts: tuple[Message, ...]
    keep_ids: tuple[int, ...]
    llm_calls: int
    fallback_reason: Fallback | None
    tokens_before: float
    tokens_after: float

    @property
    def fallback(self) -> str | None:
        """Short reason when a fallback fired (English), else ``None``."""
        return None if self.fallback_reason is None else str(self.fallback_reason)

    @property
    def is_empty(self) -> bool:
        return not self.delete_ids and not self.inserts

    @property
    def saved_ratio(self) -> float:
        return saved_ratio(self.tokens_before, self.tokens_after)

    def to_dict(self) -> dict[str, Any]:
        """The API shape of ``POST /api/v1/strategies/memory/{name}/plan``."""
        return {
            "strategy": self.strategy,
            "delete_ids": list(self.delete_ids),
            "inserts": [m.to_dict(include_id=True) for m in self.inserts],
            "keep_ids": list(self.keep_ids),
            "llm_calls": self.llm_calls,
            "fallback": self.fallback,
            "tokens_before": round(self.tokens_before, 1),
            "tokens_after": round(self.tokens_after, 1),
            "saved_ratio": self.saved_ratio,
        }
