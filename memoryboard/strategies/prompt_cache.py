"""How providers' prompt caches bill a sequence of model calls: what each call reads from the cache,
writes to it, and pays in full.

Three models (``CacheModel.kind``):

- ``ideal``: the tokens of the longest run of leading messages identical to the previous call's input are
  read from the cache, whatever their length and however long ago; nothing is written at a price.
- ``openai``: automatic prefix caching. Only prompts of at least :data:`OPENAI_MIN_TOKENS` tokens are
  cached, in steps of :data:`OPENAI_BLOCK_TOKENS`, on an exact prefix; a prefix left idle longer than
  ``ttl_seconds`` (5–10 minutes, at most an hour; 24 h with ``prompt_cache_retention``) is gone. Writes cost
  the plain input price, so none are counted.
- ``anthropic``: explicit breakpoints placed as a client would: after the system prompt and on the last
  message (a one-shot summary request: the system prompt only). A breakpoint's prefix is cached only from ``min_tokens`` (1,024 to 4,096 by model); a read
  looks back at most :data:`ANTHROPIC_LOOKBACK` blocks before a breakpoint; an entry lives ``ttl_seconds``
  (300: written at 1.25× the input price, 3600: at 2×), refreshed on each hit. Input billed = uncached +
  cache creation + cache read.

Approximations (docs/decisions.md): tokens are the project's estimate, not a tokenizer's; a prefix is
matched message by message (a message changed half way shares nothing); a call is compared with the cache
its own stream left after the previous call (a prefix only an older call had is forgotten); a message is one
block for the look-back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .errors import StrategyConfigError
from .messages import Message, Role
from .tokens import tokens_of_chars

__all__ = [
    "ANTHROPIC_LOOKBACK",
    "ANTHROPIC_TTLS",
    "CACHE_MODELS",
    "CacheModel",
    "CacheUse",
    "OPENAI_BLOCK_TOKENS",
    "OPENAI_MIN_TOKENS",
    "PromptCache",
    "write_multiplier",
]

CACHE_MODELS = ("ideal", "openai", "anthropic")
OPENAI_MIN_TOKENS = 1024
OPENAI_BLOCK_TOKENS = 128
OPENAI_MAX_TTL = 24 * 3600  # prompt_cache_retention="24h"
ANTHROPIC_TTLS = (300, 3600)
ANTHROPIC_LOOKBACK = 20
ANTHROPIC_WRITE = {300: 1.25, 3600: 2.0}
MAX_MIN_TOKENS = 100_000
MAX_GAP_SECONDS = 7 * 24 * 3600


def write_multiplier(kind: str, ttl_seconds: int) -> float:
    """What a cache write costs, as a multiple of the input price (1 where writes cost nothing extra)."""
    return ANTHROPIC_WRITE.get(ttl_seconds, 1.0) if kind == "anthropic" else 1.0


@dataclass(frozen=True)
class CacheModel:
    """Which provider cache prices the calls, and its settings.

    Attributes:
        kind: ``"ideal"``, ``"openai"`` or ``"anthropic"``.
        ttl_seconds: OpenAI: idle time after which a prefix is gone (1 to 86,400); Anthropic: an entry's
            lifetime, 300 or 3600.
        min_tokens: Anthropic's minimum cacheable prefix of the model (OpenAI's is fixed at 1,024).
        seconds_between_calls: Time between calls when the trace has no timestamps.
    """

    kind: Literal["ideal", "openai", "anthropic"] = "ideal"
    ttl_seconds: int = 300
    min_tokens: int = 1024
    seconds_between_calls: float = 30.0

    def __post_init__(self) -> None:
        if self.kind not in CACHE_MODELS:
            raise StrategyConfigError("cache_model", f"must be one of {', '.join(CACHE_MODELS)}, got {self.kind!r}")
        ttl = self.ttl_seconds
        if isinstance(ttl, bool) or not isinstance(ttl, int):
            raise StrategyConfigError("cache_ttl_seconds", f"must be an integer, got {ttl!r}")
        if self.kind == "anthropic" and ttl not in ANTHROPIC_TTLS:
            raise StrategyConfigError("cache_ttl_seconds", "Anthropic's cache lives 300 or 3600 seconds")
        if not 1 <= ttl <= OPENAI_MAX_TTL:
            raise StrategyConfigError("cache_ttl_seconds", f"must be from 1 to {OPENAI_MAX_TTL}, got {ttl}")
        low = self.min_tokens
        if isinstance(low, bool) or not isinstance(low, int) or not 1 <= low <= MAX_MIN_TOKENS:
            raise StrategyConfigError("cache_min_tokens", f"must be an integer from 1 to {MAX_MIN_TOKENS}")
        gap = self.seconds_between_calls
        if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not 0 <= gap <= MAX_GAP_SECONDS:
            raise StrategyConfigError("seconds_between_calls", f"must be a number from 0 to {MAX_GAP_SECONDS}")
        object.__setattr__(self, "seconds_between_calls", float(gap))

    @property
    def write_multiplier(self) -> float:
        return write_multiplier(self.kind, self.ttl_seconds)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "ttl_seconds": self.ttl_seconds, "min_tokens": self.min_tokens,
                "seconds_between_calls": self.seconds_between_calls}


@dataclass(frozen=True)
class CacheUse:
    """One call's input split as billed: ``read`` from the cache, ``write`` to it, the rest ``uncached``."""

    read: int
    write: int
    uncached: int


def _common(previous: Sequence[Message], current: Sequence[Message]) -> int:
    n = 0
    for a, b in zip(previous, current):
        if not (a is b or a == b):
            break
        n += 1
    return n


def _system_prompt_end(messages: Sequence[Message]) -> int:
    k = 0
    while k < len(messages) and messages[k].role is Role.SYSTEM and not messages[k].is_summary:
        k += 1
    return k


@dataclass
class PromptCache:
    """The cache one stream of calls (an agent's, or its summarizer's) leaves behind, call after call.

    ``entries`` maps a prefix length of the previous call's input (in messages) to when it was last
    written or read; every entry is a prefix of that input.
    """

    model: CacheModel
    previous: Sequence[Message] = ()
    entries: dict[int, float] = field(default_factory=dict)
    # Anthropic: a breakpoint on the last message too (a conversation); a one-shot request (a summary)
    # marks only its system prompt.
    last_breakpoint: bool = True

    def call(self, messages: Sequence[Message], at: float) -> CacheUse:
        """Bill one call made at ``at`` seconds with ``messages`` as its whole input, and remember it."""
        sizes = [m.size for m in messages]

        def tokens(k: int) -> int:
            return round(tokens_of_chars(sum(sizes[:k]), k))

        total = tokens(len(messages))
        common = _common(self.previous, messages)
        kind = self.model.kind
        if kind == "ideal":
            read = tokens(common)
            self.previous = messages
            return CacheUse(read, 0, total - read)
        ttl = self.model.ttl_seconds
        alive = {k: t for k, t in self.entries.items() if at - t <= ttl}
        if kind == "openai":
            # Blocks of a cached prompt stay usable up to where the prompts part.
            longest = max((min(k, common) for k in alive), default=0)
            prefix = tokens(longest)
            read = prefix // OPENAI_BLOCK_TOKENS * OPENAI_BLOCK_TOKENS if prefix >= OPENAI_MIN_TOKENS else 0
            entries = {longest: at} if read else {}
            if total >= OPENAI_MIN_TOKENS:
                entries[len(messages)] = at
            self.previous, self.entries = messages, entries
            return CacheUse(read, 0, total - read)
        n = len(messages)
        breakpoints = sorted({b for b in (_system_prompt_end(messages), n if self.last_breakpoint else 0) if b})
        usable = [k for k in alive if k <= common and any(b - ANTHROPIC_LOOKBACK <= k <= b for b in breakpoints)]
        hit = max(usable, default=0)
        read = tokens(hit)
        entries = {k: t for k, t in alive.items() if k <= common}
        for k in (hit, *breakpoints):
            if k and k <= hit and k in entries:
                entries[k] = at  # a hit refreshes the entry's lifetime
        write = 0
        cacheable = [b for b in breakpoints if b > hit and tokens(b) >= self.model.min_tokens]
        if cacheable:
            write = tokens(cacheable[-1]) - read
            for b in cacheable:
                entries[b] = at
        self.previous, self.entries = messages, entries
        return CacheUse(read, write, total - read - write)
