"""Context strategies (DESIGN 1.2): pure functions over the messages sent to the LLM.

The input list and its messages are never mutated or copied: output tuples reuse the input messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, replace
from itertools import accumulate, repeat, takewhile
from operator import add, attrgetter
from typing import Any

from .config import (
    CLEARED_PLACEHOLDER,
    ClearToolResultsConfig,
    CompositeConfig,
    SlidingWindowConfig,
    SummarizeConfig,
    TrimConfig,
    normalize_name,
    parse_params,
)
from .errors import StrategyConfigError, SummarizerError
from .formats import (
    MeasuredConversation,
    cleared_call_inputs,
    cleared_message,
    has_thinking,
    read_conversation,
    result_text,
    to_messages,
    without_thinking,
)
from .messages import Message, Role
from .result import ContextResult, Fallback
from .summarizer import (
    CONTEXT_SUMMARY_INSTRUCTION,
    MAX_CONVERSATION_CHARS,
    OfflineSummarizer,
    Summarizer,
    transcript_line,
)
from .summary_cache import SummaryCache, prefix_hashes
from .tokens import CHARS_PER_TOKEN, MESSAGE_OVERHEAD, tokens_of_chars
from .units import Units

__all__ = [
    "FALLBACK_KEEP_FIRST",
    "trim",
    "summarize",
    "sliding_window",
    "clear_tool_results",
    "composite",
    "apply_context",
    "behind_system_prompt",
    "system_prompt_length",
    "cut_conversation_text",
    "call_summarizer",
]

FALLBACK_KEEP_FIRST = 3

_UNITS_PER_MESSAGE = int(MESSAGE_OVERHEAD * CHARS_PER_TOKEN)  # the 4-token overhead, in characters


def _lengths(messages: Iterable[Message]) -> list[int]:
    # A comprehension beats map(attrgetter) here: CPython 3.11+ specializes the slot attribute load.
    return [m.size for m in messages]


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

    A tool call and its results are one unit: a unit that the first ``keep_first`` or the last
    ``keep_last`` messages would split is kept whole.

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
    units = Units(msgs)
    head = units.end_of(keep_first - 1) if keep_first else 0
    tail = units.start_of(n - keep_last)
    if head >= tail:
        return _unchanged("TRIM", msgs)
    out = msgs[:head] + msgs[tail:]
    kept = tuple(range(head)) + tuple(range(tail, n))
    return ContextResult(
        "TRIM", out, kept, kept, tuple(range(head, tail)), (), _tokens(msgs), _tokens(out)
    )


def sliding_window(messages: Iterable[Any], *, max_tokens: int = 4000) -> ContextResult:
    """SLIDING_WINDOW: the newest messages whose estimated tokens fit in ``max_tokens``.

    Walks from the newest message backwards and stops at the first one that would exceed the budget;
    the kept messages stay in their original order. A tool call and its results are one unit: the walk
    adds a unit's tokens at once and stops at the first unit that does not fit.

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
    return _sliding_window(_lengths(msgs), max_tokens, msgs.__getitem__)


def _sliding_window(
    lengths: list[int], max_tokens: int, messages: Callable[[slice], tuple[Message, ...]]
) -> ContextResult:
    """SLIDING_WINDOW over the messages' sizes (:attr:`Message.size`); ``messages(slice(start, None))``
    gives the messages from ``start`` on, the only ones it reads (see :class:`MeasuredConversation`)."""
    n = len(lengths)
    # Integer arithmetic: tokens <= max_tokens  <=>  chars + 10 * count <= 2.5 * max_tokens, so the
    # comparison is exact. The walk runs in C (accumulate/takewhile) and stops at the first message
    # that would exceed the budget.
    limit = (5 * max_tokens) // 2
    window = list(takewhile(limit.__ge__, accumulate(map(add, reversed(lengths), repeat(_UNITS_PER_MESSAGE)))))
    count = len(window)
    start = n - count
    tail = messages(slice(start, None)) if count else ()
    if count:
        # Everything from ``start`` fits; the window begins at the first unit boundary in it.
        skip = _first_unit_boundary(tail)
        if skip:
            start += skip
            count -= skip
            window = window[:count]
            tail = tail[skip:]
    kept = tuple(range(start, n))
    chars_after = window[-1] - _UNITS_PER_MESSAGE * count if count else 0
    return ContextResult(
        "SLIDING_WINDOW",
        tail,
        kept,
        kept,
        tuple(range(start)),
        (),
        tokens_of_chars(sum(lengths), n),
        tokens_of_chars(chars_after, count),
    )


_RESULT_IDS = attrgetter("result_ids")


def _first_unit_boundary(tail: tuple[Message, ...]) -> int:
    """The first position of ``tail`` (a suffix of the input) that starts a unit: no result at or after it
    answers a call before it. ``len(tail)`` if there is none.

    Fast answers first (measured: half the cost of the walk on a 5k-message window): no result at all, or
    every result's call in ``tail``, gives 0; a cut through one unit gives the count of its leading results.
    Otherwise (a malformed trace) the exact walk decides.
    """
    if not any(map(_RESULT_IDS, tail)):  # in C: a trace without tool results pays almost nothing
        return 0
    results = [m.result_ids for m in tail if m.result_ids]
    calls = {c.id for m in tail if m.tool_calls for c in m.tool_calls}
    missing = {r for ids in results for r in ids}.difference(calls)
    if not missing:
        return 0
    k = 0
    while k < len(tail) and tail[k].result_ids and not missing.isdisjoint(tail[k].result_ids):
        k += 1
    if k and sum(1 for ids in results if not missing.isdisjoint(ids)) == k:
        return k
    return _walk_unit_boundary(tail)


def _walk_unit_boundary(tail: tuple[Message, ...]) -> int:
    """:func:`_first_unit_boundary` by walking the messages with tool calls or results, newest first:
    ``pending`` holds the result ids whose call has not been reached yet; a position with nothing pending
    after it is a boundary. A result whose call is not in ``tail`` keeps every position before it from
    being one, so the window then ends after it."""
    flagged = [k for k, m in enumerate(tail) if m.result_ids or m.tool_calls]
    pending: set[str] = set()
    best = len(tail)
    for k in reversed(flagged):
        if not pending:
            best = k + 1
        m = tail[k]
        if m.result_ids:
            pending.update(m.result_ids)
        if m.tool_calls and pending:
            pending.difference_update([c.id for c in m.tool_calls])
        if not pending:
            best = k
    return 0 if not pending else best


def cut_conversation_text(messages: Iterable[Message], limit: int = MAX_CONVERSATION_CHARS) -> str:
    """``conversation_text(messages)[:limit]``, without building the text beyond the limit."""
    parts: list[str] = []
    size = 0
    for m in messages:
        line = transcript_line(m)
        parts.append(line)
        size += len(line) + 1
        if size >= limit:
            break
    return "\n".join(parts)[:limit]


def call_summarizer(summarizer: Summarizer, text: str, instruction: str) -> tuple[str | None, tuple[str, str] | None]:
    """Call a summarizer, turning every failure into a short reason instead of an exception.

    Returns:
        ``(summary, None)`` on success, ``(None, (failure, detail))`` on failure, as in :class:`Fallback`:
        ``("error", its message)``, ``("empty", "")`` or ``("not_text", the returned type)``.
    """
    try:
        summary = summarizer.summarize(text, instruction=instruction)
    except Exception as exc:  # noqa: BLE001 - any summarizer failure must degrade, never break the call
        detail = str(exc).strip() or type(exc).__name__
        if not isinstance(exc, SummarizerError) and detail != type(exc).__name__:
            detail = f"{type(exc).__name__}: {detail}"
        return None, ("error", detail[:200])
    if not isinstance(summary, str):
        return None, ("not_text", type(summary).__name__)
    if not summary.strip():
        return None, ("empty", "")
    return summary, None


def summarize(
    messages: Iterable[Any],
    *,
    threshold: int = 20,
    keep_last: int = 6,
    summarizer: Summarizer,
    cache: SummaryCache | None = None,
    trigger_tokens: int = 0,
    trigger_fraction: float = 0.0,
    window_tokens: int = 0,
    summary_prompt: str = "",
    trigger_combine: str = "any",
) -> ContextResult:
    """SUMMARIZE: above ``threshold`` messages, replace all but the last ``keep_last`` by one summary.

    The summarized messages are joined as ``ROLE: content`` lines, cut to the first
    :data:`MAX_CONVERSATION_CHARS` characters and summarized in one call with
    :data:`CONTEXT_SUMMARY_INSTRUCTION`. The output is ``[SYSTEM summary] + last keep_last messages``; the
    summary has ``metadata={"summary": True}``. A tool call and its results are one unit: when the last
    ``keep_last`` messages would split one, it is kept whole (the summary covers a little less).

    Args:
        messages: Messages or anything :func:`to_messages` accepts.
        threshold: At or below this many messages nothing happens (no LLM call).
        keep_last: Newest messages kept verbatim.
        summarizer: The summarizer to call.
        cache: Summaries of this conversation already made (:mod:`.summary_cache`): reused while fewer than
            ``threshold`` messages follow one, else extended with only the new messages. ``None``: none.
        trigger_tokens: Also summarize above this many estimated tokens (0: off).
        trigger_fraction: Also summarize above this fraction of ``window_tokens`` (0: off).
        window_tokens: The model's context window, for ``trigger_fraction``.
        summary_prompt: The instruction for the summarizer; empty: :data:`CONTEXT_SUMMARY_INSTRUCTION`.
        trigger_combine: ``"any"``: summarize when any trigger holds; ``"all"``: when every trigger set holds.

    Returns:
        The result (``summary_cache`` says whether a cached summary was ``"reused"`` or ``"extended"``, or
        a ``"new"`` one stored). If the summarizer fails (any exception), the output degrades to the first 3 messages,
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
    config = SummarizeConfig(threshold, keep_last, trigger_tokens, trigger_fraction, window_tokens, summary_prompt,
                             trigger_combine)
    instruction = summary_prompt or CONTEXT_SUMMARY_INSTRUCTION
    msgs = to_messages(messages)
    n = len(msgs)
    if keep_last >= n or not config.triggered(n, _tokens(msgs)):
        return _unchanged("SUMMARIZE", msgs)
    units = Units(msgs)
    cut = units.start_of(n - keep_last)
    if cut <= 0:
        return _unchanged("SUMMARIZE", msgs)
    cache_state = None
    if cache is None:
        text = cut_conversation_text(msgs[:cut])
        summary, failure = call_summarizer(summarizer, text, instruction)
    else:
        cut, summary, failure, cache_state = _cached_summary(
            msgs, cut, threshold, units, summarizer, cache, instruction
        )
    tokens_before = _tokens(msgs)
    if failure is not None:
        keep = units.end_of(min(FALLBACK_KEEP_FIRST, n) - 1)
        out = msgs[:keep]
        kept = tuple(range(keep))
        return ContextResult(
            "SUMMARIZE", out, kept, kept, tuple(range(keep, n)), (), tokens_before, _tokens(out),
            llm_calls=1, fallback_reason=Fallback("kept_first", *failure, kept=keep),
        )
    summary_message = Message(Role.SYSTEM, summary, None, {"summary": True})
    out = (summary_message,) + msgs[cut:]
    kept = tuple(range(cut, n))
    return ContextResult(
        "SUMMARIZE", out, (None,) + kept, kept, (), tuple(range(cut)), tokens_before, _tokens(out),
        llm_calls=0 if cache_state == "reused" else 1, summary_cache=cache_state,
    )


def _cached_summary(
    msgs: tuple[Message, ...], cut: int, threshold: int, units: Units, summarizer: Summarizer, cache: SummaryCache,
    instruction: str = CONTEXT_SUMMARY_INSTRUCTION,
) -> tuple[int, str | None, tuple[str, str] | None, str]:
    """The summary of ``msgs[:cut]`` through the cache: ``(cut, summary, failure, state)``; the cut moves
    back to the cached prefix when that one is reused."""
    model = getattr(summarizer, "name", type(summarizer).__name__)
    hashes = prefix_hashes(msgs, cut)
    entries = cache.entries(model=model, prompt=instruction)
    best = 0
    if entries:
        # The longest cached prefix that still ends on a unit boundary (a call answered since is not cut).
        best = next((k for k in range(cut, 0, -1) if hashes[k] in entries and units.start_of(k) == k), 0)
    if best and cut - best < threshold:
        return best, entries[hashes[best]][1], None, "reused"
    if best:
        earlier = entries[hashes[best]][1]
        text = f"SUMMARY: {earlier}\n" + cut_conversation_text(msgs[best:cut])
        state = "extended"
    else:
        text = cut_conversation_text(msgs[:cut])
        state = "new"
    summary, failure = call_summarizer(summarizer, text[:MAX_CONVERSATION_CHARS], instruction)
    if failure is None:
        cache.store(model=model, prompt=instruction, prefix_hash=hashes[cut], count=cut,
                    summary=summary)
    return cut, summary, failure, state


def clear_tool_results(
    messages: Iterable[Any],
    *,
    trigger_tokens: int = 4000,
    keep: int = 3,
    exclude_tools: Iterable[str] = (),
    placeholder: str = CLEARED_PLACEHOLDER,
    clear_at_least: int = 0,
    clear_tool_inputs: bool = False,
    recent_turns: int = 0,
    max_output_chars: int = 0,
    preview_chars: int = 0,
    clear_thinking: bool = False,
    keep_thinking_turns: int = 1,
) -> ContextResult:
    """CLEAR_TOOL_RESULTS: above ``trigger_tokens``, clear the content of the oldest tool results.

    What Anthropic's context editing and LangChain's ``ClearToolUsesEdit`` do: when the estimated tokens
    exceed ``trigger_tokens``, every tool result but the newest ``keep`` has its content replaced by
    ``placeholder``, except the results of the tools named in ``exclude_tools``. Calls, ids, every other
    field and the order stay, so no unit is split. A result is an OpenAI ``tool`` message (or TOOL row) or
    one ``tool_result`` block of an Anthropic user turn (its other blocks stay).

    Args:
        messages: Messages or anything :func:`to_messages` accepts.
        trigger_tokens: Nothing happens at or below this estimate.
        keep: Newest tool results left untouched.
        exclude_tools: Tool names whose results are never cleared.
        placeholder: The text that replaces a cleared result.
        clear_at_least: Clear only if that frees at least this many estimated tokens, else nothing (a
            cleared prefix breaks the prompt cache: clear a lot at once or not at all).
        clear_tool_inputs: Also replace the arguments of the cleared results' calls by ``{}``.
        recent_turns: Results from the ``recent_turns``-th last user question on are never cleared.
        max_output_chars: Only results longer than this many characters are cleared (0: any).
        preview_chars: A cleared result keeps its first ``preview_chars`` characters, then the placeholder.
        clear_thinking: Also remove the ``thinking`` / ``redacted_thinking`` blocks of older assistant turns.
        keep_thinking_turns: The newest assistant turns with thinking blocks that keep them.

    Returns:
        The result; changed messages are in ``cleared``, the others in ``kept``.

    Example:
        >>> from memoryboard.strategies.messages import ToolCall
        >>> msgs = [Message(Role.ASSISTANT, "", tool_calls=(ToolCall("a", "search"),)),
        ...         Message(Role.TOOL, "x" * 100, result_ids=("a",)),
        ...         Message(Role.ASSISTANT, "", tool_calls=(ToolCall("b", "search"),)),
        ...         Message(Role.TOOL, "y" * 100, result_ids=("b",))]
        >>> clear_tool_results(msgs, trigger_tokens=10, keep=1).cleared
        (1,)
    """
    config = ClearToolResultsConfig(
        trigger_tokens, keep, exclude_tools, clear_at_least, clear_tool_inputs, placeholder, recent_turns,
        max_output_chars, preview_chars, clear_thinking, keep_thinking_turns,
    )
    msgs = to_messages(messages)
    tokens_before = _tokens(msgs)
    if tokens_before <= config.trigger_tokens:
        return _unchanged("CLEAR_TOOL_RESULTS", msgs, tokens_before)
    protected_from = len(msgs)
    if config.recent_turns:
        questions = [i for i, m in enumerate(msgs) if m.role is Role.USER and not m.result_ids]
        if questions:
            protected_from = questions[-min(config.recent_turns, len(questions))]
    names = {c.id: c.name for m in msgs if m.tool_calls for c in m.tool_calls}
    results = [
        (i, rid)
        for i, m in enumerate(msgs)
        if m.result_ids or m.role is Role.TOOL
        for rid in (m.result_ids or (None,))
    ]
    older = results[: len(results) - config.keep] if config.keep else results
    excluded = frozenset(config.exclude_tools)
    targets: dict[int, set[str]] = {}
    for i, rid in older:
        if i >= protected_from or (rid is not None and names.get(rid) in excluded):
            continue
        if config.max_output_chars and len(result_text(msgs[i], rid)) <= config.max_output_chars:
            continue
        targets.setdefault(i, set())
        if rid is not None:
            targets[i].add(rid)
    text = config.placeholder
    replacement = (lambda old: f"{old[:config.preview_chars]}\n{text}") if config.preview_chars else text
    out = list(msgs)
    cleared: list[int] = []
    for i, ids in targets.items():
        new = cleared_message(msgs[i], frozenset(ids), replacement)
        if new.content != msgs[i].content or new.extra != msgs[i].extra:
            out[i] = new
            cleared.append(i)
    if cleared and config.clear_tool_inputs:
        call_ids = frozenset(rid for ids in targets.values() for rid in ids)
        for i, m in enumerate(msgs):
            if m.tool_calls and any(c.id in call_ids for c in m.tool_calls):
                new = cleared_call_inputs(m, call_ids)
                if new.extra != m.extra:
                    out[i] = new
                    cleared.append(i)
    if config.clear_thinking:
        thinking = [i for i, m in enumerate(msgs) if m.role is Role.ASSISTANT and has_thinking(m)]
        for i in thinking[: max(len(thinking) - config.keep_thinking_turns, 0)]:
            out[i] = without_thinking(out[i])
            if i not in cleared:
                cleared.append(i)
    if not cleared:
        return _unchanged("CLEAR_TOOL_RESULTS", msgs, tokens_before)
    gone = set(cleared)
    result_msgs = tuple(out)
    if tokens_before - _tokens(result_msgs) < config.clear_at_least:
        return _unchanged("CLEAR_TOOL_RESULTS", msgs, tokens_before)
    return ContextResult(
        "CLEAR_TOOL_RESULTS", result_msgs, tuple(range(len(msgs))),
        tuple(i for i in range(len(msgs)) if i not in gone), (), (), tokens_before, _tokens(result_msgs),
        cleared=tuple(sorted(cleared)),
    )


def _run_step(
    name: str, msgs: tuple[Message, ...], config: CompositeConfig, summarizer: Summarizer,
    cache: SummaryCache | None = None,
) -> ContextResult:
    if name == "TRIM":
        return trim(msgs, keep_first=config.trim.keep_first, keep_last=config.trim.keep_last)
    if name == "SUMMARIZE":
        return summarize(msgs, **asdict(config.summarize), summarizer=summarizer, cache=cache)
    if name == "CLEAR_TOOL_RESULTS":
        return clear_tool_results(msgs, **asdict(config.clear_tool_results))
    return sliding_window(msgs, max_tokens=config.sliding_window.max_tokens)


def _composite(
    msgs: tuple[Message, ...], config: CompositeConfig, summarizer: Summarizer, cache: SummaryCache | None = None
) -> ContextResult:
    n = len(msgs)
    # For each current message: the original indexes it stands for, and its state: "k" an original
    # message as it came, "s" a summary, "c" an original message whose tool result was cleared.
    origins: list[tuple[int, ...]] = [(i,) for i in range(n)]
    states: list[str] = ["k"] * n
    current = msgs
    step_results: list[ContextResult] = []
    for name in config.steps:
        # Only a step on the conversation as it is stored may use its cache (a summary of a trimmed
        # copy covers other messages): the first step, or steps after ones that changed nothing.
        unchanged = all(not (r.dropped or r.summarized or r.cleared) for r in step_results)
        result = _run_step(name, current, config, summarizer, cache if unchanged else None)
        step_results.append(result)
        new_origins: list[tuple[int, ...]] = []
        new_states: list[str] = []
        cleared_now = set(result.cleared)
        for source in result.sources:
            if source is None:
                folded = sorted({o for j in result.summarized for o in origins[j]})
                new_origins.append(tuple(folded))
                new_states.append("s")
            else:
                new_origins.append(origins[source])
                new_states.append("c" if source in cleared_now and states[source] == "k" else states[source])
        origins, states, current = new_origins, new_states, result.messages

    sources: list[int | None] = []
    kept: list[int] = []
    summarized: list[int] = []
    cleared: list[int] = []
    for origin, state in zip(origins, states):
        if state == "s":
            sources.append(None)
            summarized.extend(origin)
        else:
            sources.append(origin[0])
            (kept if state == "k" else cleared).append(origin[0])
    kept.sort()
    summarized.sort()
    cleared.sort()
    present = set(kept)
    present.update(summarized)
    present.update(cleared)
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
        fallback_reason=next((r.fallback_reason for r in step_results if r.fallback_reason), None),
        steps=tuple(step_results),
        cleared=tuple(cleared),
        summary_cache=next((r.summary_cache for r in step_results if r.summary_cache), None),
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
        steps: Strategy names in order (any case); TRIM, SUMMARIZE, SLIDING_WINDOW and CLEAR_TOOL_RESULTS.
        summarizer: Used by SUMMARIZE steps; ``None`` means :class:`OfflineSummarizer`.
        **step_params: One mapping per step name, e.g. ``summarize={"threshold": 10}``,
            ``sliding_window={"max_tokens": 2000}``, ``trim={...}``, ``clear_tool_results={...}``.

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


_CONFIG_TYPES = (TrimConfig, SummarizeConfig, SlidingWindowConfig, ClearToolResultsConfig, CompositeConfig)
_EXPECTED_CONFIG = {
    "TRIM": TrimConfig, "SUMMARIZE": SummarizeConfig, "SLIDING_WINDOW": SlidingWindowConfig,
    "CLEAR_TOOL_RESULTS": ClearToolResultsConfig, "COMPOSITE": CompositeConfig,
}


def system_prompt_length(msgs: tuple[Message, ...]) -> int:
    """How many leading messages are the system prompt (SYSTEM messages that are not a summary)."""
    head = 0
    while head < len(msgs) and _is_system_prompt(msgs[head]):
        head += 1
    return head


def _is_system_prompt(message: Message) -> bool:
    return message.role is Role.SYSTEM and not message.is_summary


def behind_system_prompt(result: ContextResult, head: tuple[Message, ...]) -> ContextResult:
    """``result`` (of the messages after the system prompt ``head``) as a result of the whole list."""
    h = len(head)
    if not h:
        return result
    shift = tuple(range(h))
    tokens = _tokens(head)
    return replace(
        result,
        messages=head + result.messages,
        sources=shift + tuple(None if s is None else s + h for s in result.sources),
        kept=shift + tuple(i + h for i in result.kept),
        dropped=tuple(i + h for i in result.dropped),
        summarized=tuple(i + h for i in result.summarized),
        cleared=tuple(i + h for i in result.cleared),
        tokens_before=result.tokens_before + tokens,
        tokens_after=result.tokens_after + tokens,
    )


def _run(
    canonical: str, msgs: tuple[Message, ...], config: Any, summarizer: Summarizer | None,
    cache: SummaryCache | None = None,
) -> ContextResult:
    if canonical == "TRIM":
        return trim(msgs, keep_first=config.keep_first, keep_last=config.keep_last)
    if canonical == "SLIDING_WINDOW":
        return sliding_window(msgs, max_tokens=config.max_tokens)
    if canonical == "CLEAR_TOOL_RESULTS":
        return clear_tool_results(msgs, **asdict(config))
    summarizer = summarizer or OfflineSummarizer()
    if canonical == "SUMMARIZE":
        return summarize(msgs, **asdict(config), summarizer=summarizer, cache=cache)
    return _composite(msgs, config, summarizer, cache)


def apply_context(
    name: str,
    messages: Iterable[Any],
    params: Mapping[str, Any] | TrimConfig | SummarizeConfig | SlidingWindowConfig | ClearToolResultsConfig
    | CompositeConfig | None = None,
    *,
    summarizer: Summarizer | None = None,
    format: str | None = None,
    system: Any = None,
    keep_system: bool = False,
    summary_cache: SummaryCache | None = None,
) -> ContextResult:
    """Run a context strategy by name, with parameters from JSON (the API, playground and runtime entry point).

    Args:
        name: ``"trim"``, ``"TRIM"``, ``"sliding_window"``, ``"clear-tool-results"``, ...
        messages: OpenAI or Anthropic message dicts, stored rows, or :class:`Message` objects.
        params: JSON parameters (see :func:`parse_params`), a config object, or ``None`` for defaults.
        summarizer: For SUMMARIZE / COMPOSITE; ``None`` means :class:`OfflineSummarizer`.
        format: ``"openai"`` / ``"anthropic"``, or ``None`` to detect it from the messages.
        system: Anthropic's top-level system prompt; never given to the strategy, answered unchanged.
        keep_system: Keep the leading system messages (the system prompt) as they are and run the
            strategy on the messages after them; the agent runtime always does, the playground by default.
        summary_cache: The conversation's cached summaries, for SUMMARIZE (alone or in COMPOSITE).

    Returns:
        The strategy's :class:`ContextResult`, in the input's format (``result.to_dict()``).

    Raises:
        StrategyConfigError: Unknown strategy (``field="name"``) or bad parameters.
        StrategyInputError: A message cannot be converted (the field is named).

    Example:
        >>> apply_context("trim", [{"role": "user", "content": "hi"}], {"keep_last": 3}).kept
        (0,)
    """
    canonical = normalize_name(name, "context")
    if isinstance(params, _CONFIG_TYPES):
        if not isinstance(params, _EXPECTED_CONFIG[canonical]):
            raise StrategyConfigError("params", f"{type(params).__name__} does not configure {canonical}")
        config = params
    else:
        config = parse_params(canonical, params)
    if canonical == "SLIDING_WINDOW":
        # The window needs every message's size but only its own messages: built on demand.
        measured = MeasuredConversation(messages, format=format, system=system)
        head = 0
        if keep_system:
            while head < len(measured) and _is_system_prompt(measured.read(head, head + 1)[0]):
                head += 1
        result = _sliding_window(
            measured.sizes[head:], config.max_tokens, lambda tail: measured.read(head + tail.start)
        )
        result = behind_system_prompt(result, measured.read(0, head))
        return replace(result, format=measured.format, system=measured.system)
    conversation = read_conversation(messages, format=format, system=system)
    msgs = conversation.messages
    head = system_prompt_length(msgs) if keep_system else 0
    result = behind_system_prompt(_run(canonical, msgs[head:], config, summarizer, summary_cache), msgs[:head])
    return replace(result, format=conversation.format, system=conversation.system)
