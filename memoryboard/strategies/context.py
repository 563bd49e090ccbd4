"""Context strategies (DESIGN 1.2): pure functions over the messages sent to the LLM.

The input list and its messages are never mutated or copied: output tuples reuse the input messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import accumulate, repeat, takewhile
from operator import add
from typing import Any

from .config import (
    CompositeConfig,
    SlidingWindowConfig,
    SummarizeConfig,
    TrimConfig,
    normalize_name,
    parse_params,
)
from .errors import StrategyConfigError, SummarizerError
from .messages import Message, Role, to_messages
from .result import ContextResult
from .summarizer import (
    CONTEXT_SUMMARY_INSTRUCTION,
    MAX_CONVERSATION_CHARS,
    OfflineSummarizer,
    Summarizer,
)
from .tokens import CHARS_PER_TOKEN, MESSAGE_OVERHEAD, tokens_of_chars

__all__ = [
    "FALLBACK_KEEP_FIRST",
    "trim",
    "summarize",
    "sliding_window",
    "composite",
    "apply_context",
    "cut_conversation_text",
    "call_summarizer",
]

FALLBACK_KEEP_FIRST = 3

_UNITS_PER_MESSAGE = int(MESSAGE_OVERHEAD * CHARS_PER_TOKEN)  # the 4-token overhead, in characters


def _lengths(messages: Iterable[Message]) -> list[int]:
    # A comprehension beats map(attrgetter) here: CPython 3.11+ specializes the slot attribute load.
    return [len(m.content) for m in messages]


def _chars(messages: Iterable[Message]) -> int:
    return sum(_lengths(messages))


def _tokens(messages: tuple[Message, ...]) -> float:
    return tokens_of_chars(_chars(messages), len(messages))


def _unchanged(strategy: str, msgs: tuple[Message, ...], tokens: float | None = None) -> ContextResult:
    indexes = tuple(range(len(msgs)))
    tokens = _tokens(msgs) if tokens is None else tokens
    return ContextResult(strategy, msgs, indexes, indexes, (), (), tokens, tokens)


def trim(messages: Iterable[Any], *, keep_first: int = 2, keep_last: int = 10) -> ContextResult:
    """TRIM: keep the first ``keep_first`` and the last ``keep_last`` messages, drop the middle.

    Args:
        messages: Messages or anything :func:`to_messages` accepts.
        keep_first: Messages kept from the start.
        keep_last: Messages kept from the end.

    Returns:
        The result; if ``keep_first + keep_last >= len(messages)`` everything is kept once.

    Raises:
        StrategyConfigError: A count is negative or not an integer.
        StrategyInputError: A message cannot be converted.

    Example:
        >>> msgs = [Message(Role.USER, str(i)) for i in range(1, 11)]
        >>> [m.content for m in trim(msgs, keep_first=2, keep_last=3).messages]
        ['1', '2', '8', '9', '10']
    """
    TrimConfig(keep_first, keep_last)
    msgs = to_messages(messages)
    n = len(msgs)
    if keep_first + keep_last >= n:
        return _unchanged("TRIM", msgs)
    tail = n - keep_last
    out = msgs[:keep_first] + msgs[tail:]
    kept = tuple(range(keep_first)) + tuple(range(tail, n))
    return ContextResult(
        "TRIM", out, kept, kept, tuple(range(keep_first, tail)), (), _tokens(msgs), _tokens(out)
    )


def sliding_window(messages: Iterable[Any], *, max_tokens: int = 4000) -> ContextResult:
    """SLIDING_WINDOW: the newest messages whose estimated tokens fit in ``max_tokens``.

    Walks from the newest message backwards and stops at the first one that would exceed the budget;
    the kept messages stay in their original order.

    Args:
        messages: Messages or anything :func:`to_messages` accepts.
        max_tokens: The token budget (>= 1).

    Returns:
        The result; ``tokens_after <= max_tokens`` always holds.

    Raises:
        StrategyConfigError: ``max_tokens`` is not an integer >= 1.
        StrategyInputError: A message cannot be converted.

    Example:
        Budget 1000, tokens from the newest 120, 200, 180, 250, 300: cumulative 120, 320, 500, 750,
        1050 > 1000, so the four newest messages are kept.

        >>> sizes = [740, 615, 440, 490, 290]  # oldest first; len / 2.5 + 4 = 300, 250, 180, 200, 120
        >>> sliding_window([Message(Role.USER, "x" * k) for k in sizes], max_tokens=1000).kept
        (1, 2, 3, 4)
    """
    SlidingWindowConfig(max_tokens)
    msgs = to_messages(messages)
    n = len(msgs)
    # Integer arithmetic: tokens <= max_tokens  <=>  chars + 10 * count <= 2.5 * max_tokens, so the
    # comparison is exact. The walk runs in C (accumulate/takewhile) and stops at the first message
    # that would exceed the budget.
    limit = (5 * max_tokens) // 2
    lengths = _lengths(msgs)
    window = list(takewhile(limit.__ge__, accumulate(map(add, reversed(lengths), repeat(_UNITS_PER_MESSAGE)))))
    count = len(window)
    start = n - count
    kept = tuple(range(start, n))
    chars_after = window[-1] - _UNITS_PER_MESSAGE * count if count else 0
    return ContextResult(
        "SLIDING_WINDOW",
        msgs[start:],
        kept,
        kept,
        tuple(range(start)),
        (),
        tokens_of_chars(sum(lengths), n),
        tokens_of_chars(chars_after, count),
    )


def cut_conversation_text(messages: Iterable[Message], limit: int = MAX_CONVERSATION_CHARS) -> str:
    """``conversation_text(messages)[:limit]``, without building the text beyond the limit."""
    parts: list[str] = []
    size = 0
    for m in messages:
        line = f"{m.role.value}: {m.content}"
        parts.append(line)
        size += len(line) + 1
        if size >= limit:
            break
    return "\n".join(parts)[:limit]


def call_summarizer(summarizer: Summarizer, text: str, instruction: str) -> tuple[str | None, str | None]:
    """Call a summarizer, turning every failure into a short reason instead of an exception.

    Returns:
        ``(summary, None)`` on success, ``(None, reason)`` on failure.
    """
    try:
        summary = summarizer.summarize(text, instruction=instruction)
    except Exception as exc:  # noqa: BLE001 - any summarizer failure must degrade, never break the call
        detail = str(exc).strip() or type(exc).__name__
        if not isinstance(exc, SummarizerError) and detail != type(exc).__name__:
            detail = f"{type(exc).__name__}: {detail}"
        return None, detail[:200]
    if not isinstance(summary, str):
        return None, f"summarizer returned {type(summary).__name__}, not text"
    if not summary.strip():
        return None, "summarizer returned an empty summary"
    return summary, None


def summarize(
    messages: Iterable[Any],
    *,
    threshold: int = 20,
    keep_last: int = 6,
    summarizer: Summarizer,
) -> ContextResult:
    """SUMMARIZE: above ``threshold`` messages, replace all but the last ``keep_last`` by one summary.

    The summarized messages are joined as ``ROLE: content`` lines, cut to the first
    :data:`MAX_CONVERSATION_CHARS` characters and summarized in one call with
    :data:`CONTEXT_SUMMARY_INSTRUCTION`. The output is ``[SYSTEM summary] + last keep_last messages``; the
    summary has ``metadata={"summary": True}``.

    Args:
        messages: Messages or anything :func:`to_messages` accepts.
        threshold: At or below this many messages nothing happens (no LLM call).
        keep_last: Newest messages kept verbatim.
        summarizer: The summarizer to call.

    Returns:
        The result. If the summarizer fails (any exception), the output degrades to the first 3 messages,
        ``fallback`` says why and ``llm_calls`` still counts the attempt.

    Raises:
        StrategyConfigError: A count is negative or not an integer.
        StrategyInputError: A message cannot be converted.

    Example:
        >>> msgs = [Message(Role.USER, f"Question {i}.") for i in range(30)]
        >>> r = summarize(msgs, threshold=20, keep_last=6, summarizer=OfflineSummarizer())
        >>> r.messages[0].role, len(r.messages), r.summarized == tuple(range(24))
        (<Role.SYSTEM: 'SYSTEM'>, 7, True)
    """
    SummarizeConfig(threshold, keep_last)
    msgs = to_messages(messages)
    n = len(msgs)
    if n <= threshold or keep_last >= n:
        return _unchanged("SUMMARIZE", msgs)
    cut = n - keep_last
    text = cut_conversation_text(msgs[:cut])
    summary, failure = call_summarizer(summarizer, text, CONTEXT_SUMMARY_INSTRUCTION)
    tokens_before = _tokens(msgs)
    if failure is not None:
        keep = min(FALLBACK_KEEP_FIRST, n)
        out = msgs[:keep]
        kept = tuple(range(keep))
        return ContextResult(
            "SUMMARIZE", out, kept, kept, tuple(range(keep, n)), (), tokens_before, _tokens(out),
            llm_calls=1, fallback=f"summarizer failed: {failure}; kept the first {keep} messages",
        )
    summary_message = Message(Role.SYSTEM, summary, None, {"summary": True})
    out = (summary_message,) + msgs[cut:]
    kept = tuple(range(cut, n))
    return ContextResult(
        "SUMMARIZE", out, (None,) + kept, kept, (), tuple(range(cut)), tokens_before, _tokens(out),
        llm_calls=1,
    )


def _run_step(
    name: str, msgs: tuple[Message, ...], config: CompositeConfig, summarizer: Summarizer
) -> ContextResult:
    if name == "TRIM":
        return trim(msgs, keep_first=config.trim.keep_first, keep_last=config.trim.keep_last)
    if name == "SUMMARIZE":
        return summarize(
            msgs, threshold=config.summarize.threshold, keep_last=config.summarize.keep_last,
            summarizer=summarizer,
        )
    return sliding_window(msgs, max_tokens=config.sliding_window.max_tokens)


def _composite(msgs: tuple[Message, ...], config: CompositeConfig, summarizer: Summarizer) -> ContextResult:
    n = len(msgs)
    # For each current message: the original indexes it stands for, and whether it is a summary.
    origins: list[tuple[int, ...]] = [(i,) for i in range(n)]
    is_summary: list[bool] = [False] * n
    current = msgs
    step_results: list[ContextResult] = []
    for name in config.steps:
        result = _run_step(name, current, config, summarizer)
        step_results.append(result)
        new_origins: list[tuple[int, ...]] = []
        new_is_summary: list[bool] = []
        for source in result.sources:
            if source is None:
                folded = sorted({o for j in result.summarized for o in origins[j]})
                new_origins.append(tuple(folded))
                new_is_summary.append(True)
            else:
                new_origins.append(origins[source])
                new_is_summary.append(is_summary[source])
        origins, is_summary, current = new_origins, new_is_summary, result.messages

    sources: list[int | None] = []
    kept: list[int] = []
    summarized: list[int] = []
    for origin, summary in zip(origins, is_summary):
        if summary:
            sources.append(None)
            summarized.extend(origin)
        else:
            sources.append(origin[0])
            kept.append(origin[0])
    kept.sort()
    summarized.sort()
    present = set(kept)
    present.update(summarized)
    return ContextResult(
        "COMPOSITE",
        current,
        tuple(sources),
        tuple(kept),
        tuple(i for i in range(n) if i not in present),
        tuple(summarized),
        step_results[0].tokens_before,
        step_results[-1].tokens_after,
        llm_calls=sum(r.llm_calls for r in step_results),
        fallback=next((r.fallback for r in step_results if r.fallback), None),
        steps=tuple(step_results),
    )


def composite(
    messages: Iterable[Any],
    *,
    steps: Iterable[str] = ("summarize", "sliding_window"),
    summarizer: Summarizer | None = None,
    **step_params: Mapping[str, Any],
) -> ContextResult:
    """COMPOSITE: run strategies in sequence, each on the previous step's output.

    Args:
        messages: Messages or anything :func:`to_messages` accepts.
        steps: Strategy names in order (any case); TRIM, SUMMARIZE and SLIDING_WINDOW.
        summarizer: Used by SUMMARIZE steps; ``None`` means :class:`OfflineSummarizer`.
        **step_params: One mapping per step name, e.g. ``summarize={"threshold": 10}``,
            ``sliding_window={"max_tokens": 2000}``, ``trim={...}``.

    Returns:
        The combined result: indexes refer to the ORIGINAL input; an input index is ``summarized`` when
        it was folded into a summary that is in the final output, ``dropped`` otherwise if absent;
        ``llm_calls`` is summed; ``fallback`` is the first step fallback that fired;
        ``steps`` holds each step's own result.

    Raises:
        StrategyConfigError: Empty or unknown steps, unknown or bad parameters.
        StrategyInputError: A message cannot be converted.

    Example:
        >>> msgs = [Message(Role.USER, "x" * 240) for _ in range(30)]
        >>> r = composite(msgs, steps=["summarize", "sliding_window"], sliding_window={"max_tokens": 500})
        >>> r.kept, r.llm_calls
        ((25, 26, 27, 28, 29), 1)
    """
    config = parse_params("COMPOSITE", {"steps": list(steps) if not isinstance(steps, str) else steps,
                                        **step_params})
    return _composite(to_messages(messages), config, summarizer or OfflineSummarizer())


_CONFIG_TYPES = (TrimConfig, SummarizeConfig, SlidingWindowConfig, CompositeConfig)


def apply_context(
    name: str,
    messages: Iterable[Any],
    params: Mapping[str, Any] | TrimConfig | SummarizeConfig | SlidingWindowConfig | CompositeConfig | None = None,
    *,
    summarizer: Summarizer | None = None,
) -> ContextResult:
    """Run a context strategy by name, with parameters from JSON (the API and playground entry point).

    Args:
        name: ``"trim"``, ``"TRIM"``, ``"sliding_window"``, ``"sliding-window"``, ...
        messages: Messages, JSON mappings or rows.
        params: JSON parameters (see :func:`parse_params`), a config object, or ``None`` for defaults.
        summarizer: For SUMMARIZE / COMPOSITE; ``None`` means :class:`OfflineSummarizer`.

    Returns:
        The strategy's :class:`ContextResult`.

    Raises:
        StrategyConfigError: Unknown strategy (``field="name"``) or bad parameters.
        StrategyInputError: A message cannot be converted.

    Example:
        >>> apply_context("trim", [{"role": "user", "content": "hi"}], {"keep_last": 3}).kept
        (0,)
    """
    canonical = normalize_name(name, "context")
    if isinstance(params, _CONFIG_TYPES):
        expected = {"TRIM": TrimConfig, "SUMMARIZE": SummarizeConfig,
                    "SLIDING_WINDOW": SlidingWindowConfig, "COMPOSITE": CompositeConfig}[canonical]
        if not isinstance(params, expected):
            raise StrategyConfigError("params", f"{type(params).__name__} does not configure {canonical}")
        config = params
    else:
        config = parse_params(canonical, params)
    msgs = to_messages(messages)
    if canonical == "TRIM":
        return trim(msgs, keep_first=config.keep_first, keep_last=config.keep_last)
    if canonical == "SLIDING_WINDOW":
        return sliding_window(msgs, max_tokens=config.max_tokens)
    summarizer = summarizer or OfflineSummarizer()
    if canonical == "SUMMARIZE":
        return summarize(msgs, threshold=config.threshold, keep_last=config.keep_last, summarizer=summarizer)
    return _composite(msgs, config, summarizer)
