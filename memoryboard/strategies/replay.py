"""Replay a conversation call by call under context strategies: what each strategy sends, caches and loses.

An agent calls the model once per user turn and once per tool round: before every assistant message the
model had the conversation up to it as input (and once more at the end when the trace ends on a user turn
or tool results). A replay runs a strategy on each of those inputs, as the runtime does before each call
(the leading system prompt kept aside, one summary cache per strategy across the calls), and counts:

- ``sent_tokens``: the estimated tokens of the call's whole input (DESIGN 1.1);
- ``cached_tokens``: the tokens of the longest run of leading messages identical to the previous call's
  input: what a prompt cache (OpenAI, Anthropic, DeepSeek) would serve at the cached price;
- the input messages dropped, cleared and summarized, and the summarizer calls made;
- ``lost_turns``: earlier exchanges (a user question and the reply that closed its turn) whose question or
  reply the call's input lost (neither kept nor folded into a summary): what the model can no longer use.

Tokens per call are whole numbers (the estimate rounded), so a strategy's totals are the sums of its rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .config import normalize_name, parse_params
from .context import apply_context
from .errors import StrategyConfigError
from .formats import read_conversation
from .messages import Message, Role
from .summarizer import Summarizer
from .summary_cache import InMemorySummaryCache
from .tokens import estimated_tokens, total_tokens

__all__ = ["MAX_STRATEGIES", "Price", "ReplayCall", "StrategyReplay", "call_points", "exchanges", "replay"]

MAX_STRATEGIES = 8


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0


@dataclass(frozen=True)
class ReplayCall:
    """One model call under one strategy.

    ``upto`` is how many input messages the call had (messages ``0 .. upto-1``); ``kept`` ... ``cleared``
    are input indexes; ``sent_messages`` the messages sent (summaries included).
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.call, "upto": self.upto, "sent_tokens": self.sent_tokens,
            "cached_tokens": self.cached_tokens, "output_tokens": self.output_tokens,
            "sent_messages": self.sent_messages, "kept": len(self.kept), "dropped": len(self.dropped),
            "summarized": len(self.summarized), "cleared": len(self.cleared),
            "summary_calls": self.summary_calls, "fallback": self.fallback, "lost_turns": self.lost_turns,
        }


@dataclass(frozen=True)
class StrategyReplay:
    """Every call of a conversation under one strategy, and the totals."""

    name: str
    params: Mapping[str, Any]
    calls: tuple[ReplayCall, ...] = field(default_factory=tuple)

    @property
    def totals(self) -> dict[str, int]:
        keys = ("sent_tokens", "cached_tokens", "output_tokens", "summary_calls")
        totals = {key: sum(getattr(c, key) for c in self.calls) for key in keys}
        totals["calls"] = len(self.calls)
        totals["most_lost_turns"] = max((c.lost_turns for c in self.calls), default=0)
        return totals

    def cost(self, price: Price) -> float:
        """Estimated US dollars of all the calls: uncached input, cached input and output at their prices."""
        t = self.totals
        uncached = t["sent_tokens"] - t["cached_tokens"]
        dollars = uncached * price.input + t["cached_tokens"] * price.cached_input + t["output_tokens"] * price.output
        return round(dollars / 1_000_000, 6)

    def to_dict(self, price: Price | None = None) -> dict[str, Any]:
        data = {"name": self.name, "params": dict(self.params), "rows": [c.to_dict() for c in self.calls],
                "totals": self.totals}
        if price is not None:
            data["cost"] = self.cost(price)
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


def _same(a: Message, b: Message) -> bool:
    return a is b or a == b


def _cached_prefix(previous: Sequence[Message], current: Sequence[Message]) -> int:
    """Tokens of the longest run of leading messages of ``current`` identical to ``previous``'s."""
    n = 0
    for a, b in zip(previous, current):
        if not _same(a, b):
            break
        n += 1
    return _tokens(current[:n])


def _replay_one(
    name: str, params: Mapping[str, Any], msgs: tuple[Message, ...], points: list[int],
    summarizer: Summarizer | None, format: str,
) -> StrategyReplay:
    canonical = normalize_name(name, "context")
    config = parse_params(canonical, params)
    cache = InMemorySummaryCache()
    pairs = exchanges(msgs)
    previous: tuple[Message, ...] = ()
    rows = []
    for number, upto in enumerate(points, start=1):
        # The messages are read already: naming their format skips detecting it again on every call.
        result = apply_context(
            canonical, msgs[:upto], config, summarizer=summarizer, keep_system=True, summary_cache=cache,
            format=format,
        )
        sent = result.messages
        reply = msgs[upto] if upto < len(msgs) else None
        rows.append(ReplayCall(
            call=number, upto=upto, sent_tokens=_tokens(sent), cached_tokens=_cached_prefix(previous, sent),
            output_tokens=round(estimated_tokens(reply)) if reply is not None else 0,
            sent_messages=len(sent), kept=result.kept, dropped=result.dropped, summarized=result.summarized,
            cleared=result.cleared, summary_calls=result.llm_calls, fallback=result.fallback,
            lost_turns=_lost(pairs, upto, result.dropped),
        ))
        previous = sent
    return StrategyReplay(canonical, dict(params), tuple(rows))


def replay(
    messages: Iterable[Any],
    strategies: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    format: str | None = None,
    system: Any = None,
    summarizer: Summarizer | None = None,
) -> list[StrategyReplay]:
    """Replay the conversation call by call under each strategy.

    Args:
        messages: OpenAI or Anthropic messages, or stored rows (see :func:`read_conversation`).
        strategies: ``(name, params)`` pairs, at most :data:`MAX_STRATEGIES`; a name may repeat with other
            parameters.
        format: ``"openai"`` / ``"anthropic"``, or ``None`` to detect it.
        system: Anthropic's top-level system prompt (counted in every call, never trimmed).
        summarizer: For SUMMARIZE / COMPOSITE; ``None`` means the offline one.

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
    out = []
    for i, (name, params) in enumerate(strategies):
        try:
            out.append(_replay_one(name, params or {}, msgs, points, summarizer, conversation.format))
        except StrategyConfigError as exc:
            where = "name" if exc.field == "name" else f"params.{exc.field}"
            raise StrategyConfigError(f"strategies[{i}].{where}", exc.message) from exc
    return out
