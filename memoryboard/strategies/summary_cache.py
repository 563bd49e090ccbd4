"""Summaries cached by exactly what they cover, and extended incrementally (issue 11, item 7).

SUMMARIZE in the agent runtime sees a conversation grow by a message or two a turn; summarizing its whole
history again on every turn costs one LLM call a turn. With a cache, a summary is stored under the hash of
the messages it covers (a prefix of the conversation, hashed as the summarizer reads it), the summarizer's
model and the prompt; the caller scopes the cache to one conversation. On the next turns:

- fewer than ``threshold`` messages past the cached summary: the summary is reused as it is, and the
  messages after it are kept verbatim (the kept tail is then longer than ``keep_last``), no LLM call;
- ``threshold`` or more: the cached summary plus only the new messages are summarized (one call), and the
  result is stored for the longer prefix;
- no cached prefix (or the conversation changed under it, so the hashes differ): a full summary, stored.

So a long conversation costs one summary call per ``threshold`` new messages. The package stays framework
free: the store is any object with ``entries`` and ``store`` (:class:`SummaryCache`); the dashboard's is a
``memoryboard_summary_cache`` table (``memoryboard.summary_cache``), tests use :class:`InMemorySummaryCache`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from .messages import Message
from .summarizer import transcript_line

__all__ = ["SummaryCache", "InMemorySummaryCache", "prefix_hashes", "prompt_hash"]


@runtime_checkable
class SummaryCache(Protocol):
    """Where summaries of one conversation are kept."""

    def entries(self, *, model: str, prompt: str) -> Mapping[str, tuple[int, str]]:
        """Cached summaries for this model and prompt: prefix hash → (messages covered, summary)."""
        ...

    def store(self, *, model: str, prompt: str, prefix_hash: str, count: int, summary: str) -> None:
        """Keep ``summary`` of the first ``count`` messages, whose hash is ``prefix_hash``."""
        ...


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def prefix_hashes(msgs: Sequence[Message], upto: int) -> list[str]:
    """``out[k]`` is the hash of ``msgs[:k]`` as the summarizer reads it, for ``k`` in ``0..upto``."""
    h = hashlib.sha256()
    out = [h.hexdigest()]
    for m in msgs[:upto]:
        h.update(transcript_line(m).encode("utf-8", "surrogatepass"))
        h.update(b"\n")
        out.append(h.hexdigest())
    return out


class InMemorySummaryCache:
    """A :class:`SummaryCache` in a dict (one conversation), for tests and library use."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, tuple[int, str]]] = {}

    def entries(self, *, model: str, prompt: str) -> Mapping[str, tuple[int, str]]:
        return self.rows.get((model, prompt_hash(prompt)), {})

    def store(self, *, model: str, prompt: str, prefix_hash: str, count: int, summary: str) -> None:
        self.rows.setdefault((model, prompt_hash(prompt)), {})[prefix_hash] = (count, summary)
