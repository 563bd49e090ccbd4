"""Replay a conversation call by call under context strategies: what each strategy sends, caches and loses.

An agent calls the model once per user turn and once per tool round: before every assistant message the
model had the conversation up to it as input (and once more at the end when the trace ends on a user turn
or tool results). A replay runs a strategy on each of those inputs, as the runtime does before each call
(the leading system prompt kept aside, one summary cache per strategy across the calls), and counts:

- ``sent_tokens``: the estimated tokens of the call's whole input (DESIGN 1.1);
- ``cache_read_tokens`` / ``cache_write_tokens``: what the provider's prompt cache serves and stores, by
  the chosen :class:`~.prompt_cache.CacheModel` (``cached_tokens`` is the read part);
- the input messages dropped, cleared and summarized, and the summarizer calls made;
- ``lost_turns``: earlier exchanges (a user question and the reply that closed its turn) whose question or
  reply the call's input lost (neither kept nor folded into a summary): what the model can no longer use.

Every summary the strategy asks for is a model call too (the summarizer's instruction and text in, the
summary out): one row of its own (``kind="summary"``), billed with its own cache stream and counted in the
strategy's cost. Times between calls come from the trace's timestamps when every call has one (the last
input message's ``created_at`` / ``timestamp``), else ``seconds_between_calls`` apart.

Tokens per call are whole numbers (the estimate rounded), so a strategy's totals are the sums of its rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .config import normalize_name, parse_params
from .context import apply_context
from .errors import StrategyConfigError
from .formats import read_conversation
from .messages import Message, Role
from .prompt_cache import CacheModel, PromptCache
from .summarizer import OfflineSummarizer, Summarizer
from .summary_cache import InMemorySummaryCache
from .tokens import estimated_tokens, total_tokens

__all__ = [
    "MAX_STRATEGIES", "Price", "ReplayCall", "StrategyReplay", "call_points", "call_times", "exchanges", "replay",
]

MAX_STRATEGIES = 8


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens; ``cache_write`` ``None``: the input price times the cache model's
    write multiplier (Anthropic 1.25× for 5 minutes, 2× for an hour; 1× elsewhere)."""

    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0
    cache_write: float | None = None

    def write_price(self, cache: CacheModel) -> float:
        return self.input * cache.write_multiplier if self.cache_write is None else self.cache_write

    def to_dict(self, cache: CacheModel) -> dict[str, float]:
        return {"input": self.input, "cached_input": self.cached_input, "output": self.output,
                "cache_write": self.write_price(cache)}


@dataclass(frozen=True)
class ReplayCall:
    """One model call under one strategy.

    ``upto`` is how many input messages the call had (messages ``0 .. upto-1``); ``kept`` ... ``cleared``
    are input indexes; ``sent_messages`` the messages sent (summaries included). A ``kind="summary"`` row is
    a summarizer call made before agent call ``call``; ``at`` is when, in seconds from the first call.
    """

    call: int
    upto: int
    sent_tokens: int
    cached_tokens: int
    output_tokens: int
    sent_messages: int
    kept: tuple[int, ...]
    dropped: tuple[int, ...]
    summarized: tuple[int, ...]
    cleared: tuple[int, ...]
    summary_calls: int
    fallback: str | None = None
    lost_turns: int = 0
    cache_write_tokens: int = 0
    kind: str = "agent"
    at: float = 0.0

    @property
    def cache_read_tokens(self) -> int:
        return self.cached_tokens

    @property
    def uncached_tokens(self) -> int:
        return self.sent_tokens - self.cached_tokens - self.cache_write_tokens

    def cost(self, price: Price, cache: CacheModel) -> float:
        """US dollars of this call: uncached input, cache reads, cache writes and output at their prices."""
        dollars = (self.uncached_tokens * price.input + self.cached_tokens * price.cached_input
                   + self.cache_write_tokens * price.write_price(cache) + self.output_tokens * price.output)
        return dollars / 1_000_000

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "call": self.call, "upto": self.upto, "at": round(self.at, 3),
            "sent_tokens": self.sent_tokens, "cached_tokens": self.cached_tokens,
            "cache_read_tokens": self.cached_tokens, "cache_write_tokens": self.cache_write_tokens,
            "uncached_tokens": self.uncached_tokens, "output_tokens": self.output_tokens,
            "sent_messages": self.sent_messages, "kept": len(self.kept), "dropped": len(self.dropped),
            "summarized": len(self.summarized), "cleared": len(self.cleared),
            "summary_calls": self.summary_calls, "fallback": self.fallback, "lost_turns": self.lost_turns,
        }


@dataclass(frozen=True)
class StrategyReplay:
    """Every call of a conversation under one strategy: the agent's (``calls``) and the summarizer's
    (``summaries``), billed by ``cache``; and the totals."""

    name: str
    params: Mapping[str, Any]
    calls: tuple[ReplayCall, ...] = field(default_factory=tuple)
    summaries: tuple[ReplayCall, ...] = ()
    cache: CacheModel = field(default_factory=CacheModel)
    clock: str = "gap"  # "timestamps": the times between calls came from the messages

    @property
    def rows(self) -> tuple[ReplayCall, ...]:
        """Every model call in order: each agent call after the summary calls made before it."""
        return tuple(sorted(self.calls + self.summaries, key=lambda c: (c.call, c.kind == "agent")))

    @property
    def totals(self) -> dict[str, int]:
        keys = ("sent_tokens", "cached_tokens", "output_tokens", "summary_calls", "cache_write_tokens",
                "uncached_tokens")
        totals = {key: sum(getattr(c, key) for c in self.calls) for key in keys}
        totals["cache_read_tokens"] = totals["cached_tokens"]
        totals["calls"] = len(self.calls)
        totals["most_lost_turns"] = max((c.lost_turns for c in self.calls), default=0)
        for key in ("sent_tokens", "cached_tokens", "cache_write_tokens", "uncached_tokens", "output_tokens"):
            totals[f"summary_{key}"] = sum(getattr(c, key) for c in self.summaries)
        return totals

    def cost(self, price: Price) -> float:
        """Estimated US dollars of every call the strategy causes: the agent's and the summarizer's."""
        return round(sum(c.cost(price, self.cache) for c in self.calls + self.summaries), 9)

    def summary_cost(self, price: Price) -> float:
        return round(sum(c.cost(price, self.cache) for c in self.summaries), 9)

    def to_dict(self, price: Price | None = None) -> dict[str, Any]:
        totals: dict[str, Any] = self.totals
        data = {"name": self.name, "params": dict(self.params), "cache_model": self.cache.kind, "clock": self.clock,
                "rows": [c.to_dict() for c in self.calls],
                "summary_rows": [c.to_dict() for c in self.summaries], "totals": totals}
        if price is not None:
            data["cost"] = totals["cost"] = self.cost(price)
            totals["summary_cost"] = self.summary_cost(price)
            for rows in (data["rows"], data["summary_rows"]):
                for row, call in zip(rows, self.calls if rows is data["rows"] else self.summaries):
                    row["cost"] = round(call.cost(price, self.cache), 9)
        return data


def _tokens(messages: Iterable[Message]) -> int:
    return round(total_tokens(messages))


def call_points(messages: Sequence[Message]) -> list[int]:
    """How many messages each model call had as input: one call before every assistant message that
    follows a user turn or tool results, and one at the end if the conversation ends on either."""
    points = []
    for i, m in enumerate(messages):
        if m.role is Role.ASSISTANT and i and messages[i - 1].role is not Role.ASSISTANT:
            points.append(i)
    if messages and messages[-1].role in (Role.USER, Role.TOOL):
        points.append(len(messages))
    return points


def exchanges(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """Each user question with the assistant reply that closed its turn: ``(question, answer)`` indexes
    (the last assistant message before the next question; tool results are not questions)."""
    out: list[tuple[int, int]] = []
    question = None
    answer = None
    for i, m in enumerate(messages):
        if m.role is Role.USER and not m.result_ids:
            if question is not None and answer is not None:
                out.append((question, answer))
            question, answer = i, None
        elif m.role is Role.ASSISTANT and question is not None:
            answer = i
    if question is not None and answer is not None:
        out.append((question, answer))
    return out


def _lost(pairs: list[tuple[int, int]], upto: int, dropped: tuple[int, ...]) -> int:
    """Exchanges finished before this call whose question or answer the call's input lost (a summary
    keeps them)."""
    gone = set(dropped)
    return sum(1 for q, a in pairs if a < upto and (q in gone or a in gone))


class _RecordingSummarizer:
    """Passes each summary request to ``inner`` and keeps what was sent and answered, to bill the call."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)  # the summary cache's key stays the same
        self.is_offline = getattr(inner, "is_offline", False)
        self.calls: list[tuple[str, str, str]] = []

    def summarize(self, text: str, *, instruction: str) -> str:
        try:
            summary = self.inner.summarize(text, instruction=instruction)
        except Exception:
            self.calls.append((instruction, text, ""))  # the input was sent and is billed
            raise
        self.calls.append((instruction, text, summary if isinstance(summary, str) else ""))
        return summary


def _seconds(value: Any) -> float | None:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value.strip():
        try:
            return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def message_time(message: Message) -> float | None:
    """When a message was written, in seconds, if its source says: a stored row's ``created_at``, a trace
    message's ``created_at`` / ``timestamp`` (ISO 8601 or Unix seconds)."""
    raw = message.raw
    if isinstance(raw, Mapping):
        for key in ("created_at", "timestamp"):
            if key in raw:
                return _seconds(raw[key])
        return None
    return _seconds(getattr(raw, "created_at", None))


def call_times(msgs: Sequence[Message], points: Sequence[int], gap: float) -> tuple[list[float], str]:
    """Seconds from the first call to each call, and where they came from: the timestamp of each call's
    last input message when every call has one and they never go back (``"timestamps"``), else ``gap``
    apart (``"gap"``)."""
    stamps = [message_time(msgs[upto - 1]) if upto else None for upto in points]
    if stamps and all(t is not None for t in stamps) and all(a <= b for a, b in zip(stamps, stamps[1:])):
        return [t - stamps[0] for t in stamps], "timestamps"  # type: ignore[operator]
    return [i * gap for i in range(len(points))], "gap"


def _replay_one(
    name: str, params: Mapping[str, Any], msgs: tuple[Message, ...], points: list[int], times: list[float],
    summarizer: Summarizer | None, format: str, cache_model: CacheModel, clock: str = "gap",
) -> StrategyReplay:
    canonical = normalize_name(name, "context")
    config = parse_params(canonical, params)
    cache = InMemorySummaryCache()
    recording = _RecordingSummarizer(summarizer or OfflineSummarizer())
    pairs = exchanges(msgs)
    agent_cache = PromptCache(cache_model)
    summary_cache = PromptCache(cache_model, last_breakpoint=False)
    rows = []
    summaries = []
    for number, (upto, at) in enumerate(zip(points, times), start=1):
        recording.calls.clear()
        # The messages are read already: naming their format skips detecting it again on every call.
        result = apply_context(
            canonical, msgs[:upto], config, summarizer=recording, keep_system=True, summary_cache=cache,
            format=format,
        )
        for instruction, text, summary in recording.calls:
            sent = (Message(Role.SYSTEM, instruction), Message(Role.USER, text))
            use = summary_cache.call(sent, at)
            summaries.append(ReplayCall(
                call=number, upto=upto, sent_tokens=_tokens(sent), cached_tokens=use.read,
                output_tokens=round(estimated_tokens(summary)) if summary else 0, sent_messages=2, kept=(),
                dropped=(), summarized=(), cleared=(), summary_calls=0, cache_write_tokens=use.write,
                kind="summary", at=at,
            ))
        sent = result.messages
        use = agent_cache.call(sent, at)
        reply = msgs[upto] if upto < len(msgs) else None
        rows.append(ReplayCall(
            call=number, upto=upto, sent_tokens=use.read + use.write + use.uncached, cached_tokens=use.read,
            output_tokens=round(estimated_tokens(reply)) if reply is not None else 0,
            sent_messages=len(sent), kept=result.kept, dropped=result.dropped, summarized=result.summarized,
            cleared=result.cleared, summary_calls=result.llm_calls, fallback=result.fallback,
            lost_turns=_lost(pairs, upto, result.dropped), cache_write_tokens=use.write, at=at,
        ))
    return StrategyReplay(canonical, dict(params), tuple(rows), tuple(summaries), cache_model, clock)


def replay(
    messages: Iterable[Any],
    strategies: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    format: str | None = None,
    system: Any = None,
    summarizer: Summarizer | None = None,
    cache: CacheModel | None = None,
) -> list[StrategyReplay]:
    """Replay the conversation call by call under each strategy.

    Args:
        messages: OpenAI or Anthropic messages, or stored rows (see :func:`read_conversation`).
        strategies: ``(name, params)`` pairs, at most :data:`MAX_STRATEGIES`; a name may repeat with other
            parameters.
        format: ``"openai"`` / ``"anthropic"``, or ``None`` to detect it.
        system: Anthropic's top-level system prompt (counted in every call, never trimmed).
        summarizer: For SUMMARIZE / COMPOSITE; ``None`` means the offline one.
        cache: How the provider's prompt cache bills the calls; ``None``: the ideal cache.

    Returns:
        One :class:`StrategyReplay` per strategy, in the order given.

    Raises:
        StrategyConfigError: No strategy, too many, or a bad name or parameter (``strategies[i].…``).
        StrategyInputError: A message cannot be read (the field is named).

    Example:
        >>> [r.totals["calls"] for r in replay([{"role": "user", "content": "hi"}], [("trim", {})])]
        [1]
    """
    if not strategies:
        raise StrategyConfigError("strategies", "name at least one strategy")
    if len(strategies) > MAX_STRATEGIES:
        raise StrategyConfigError("strategies", f"at most {MAX_STRATEGIES} strategies")
    conversation = read_conversation(messages, format=format, system=system)
    msgs = conversation.messages
    if isinstance(conversation.system, str) and conversation.system:
        msgs = (Message(Role.SYSTEM, conversation.system),) + msgs
    points = call_points(msgs)
    cache = cache or CacheModel()
    times, clock = call_times(msgs, points, cache.seconds_between_calls)
    out = []
    for i, (name, params) in enumerate(strategies):
        try:
            out.append(_replay_one(name, params or {}, msgs, points, times, summarizer, conversation.format, cache,
                                   clock))
        except StrategyConfigError as exc:
            where = "name" if exc.field == "name" else f"params.{exc.field}"
            raise StrategyConfigError(f"strategies[{i}].{where}", exc.message) from exc
    return out
