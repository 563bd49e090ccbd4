"""Memory strategies (DESIGN 1.3): plans over the stored rows of one conversation.

A plan is a dry run: it lists the row ids to delete and the rows to insert. Applying it (one database
transaction, audited) is the caller's job; nothing here touches a database.

A tool call and its results are one unit here as in the context layer (:mod:`.units`): TRIM, DELETE and
SUMMARIZE keep a unit whole when their cut would split it; FILTER keeps a unit whole when its rules keep
any message of it, and deletes it whole otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from typing import Any

from .config import DeleteConfig, FilterRules, SummarizeConfig, TrimConfig, normalize_name, parse_params
from .context import call_summarizer, cut_conversation_text
from .errors import StrategyConfigError, StrategyInputError
from .formats import to_messages
from .messages import Message, Role
from .result import Fallback, MemoryPlan
from .summarizer import MEMORY_SUMMARY_INSTRUCTION, OfflineSummarizer, Summarizer
from .tokens import total_tokens
from .units import Units

__all__ = [
    "MEMORY_SUMMARY_PREFIX",
    "plan_trim",
    "plan_summarize",
    "plan_delete",
    "plan_filter",
    "plan_memory",
]

MEMORY_SUMMARY_PREFIX = "[持久化记忆摘要] "


def _stored(messages: Iterable[Any]) -> tuple[Message, ...]:
    msgs = to_messages(messages)
    for i, m in enumerate(msgs):
        if m.id is None:
            raise StrategyInputError(f"messages[{i}].id", "is required for a memory strategy (a stored row)")
    return msgs


def _plan(
    strategy: str,
    msgs: tuple[Message, ...],
    keep: Iterable[bool],
    *,
    inserts: tuple[Message, ...] = (),
    llm_calls: int = 0,
) -> MemoryPlan:
    kept: list[Message] = []
    delete_ids: list[int] = []
    for m, k in zip(msgs, keep):
        if k:
            kept.append(m)
        else:
            delete_ids.append(m.id)  # type: ignore[arg-type]
    return MemoryPlan(
        strategy,
        tuple(sorted(delete_ids)),
        inserts,
        tuple(sorted(m.id for m in kept)),  # type: ignore[misc]
        llm_calls,
        None,
        total_tokens(msgs),
        total_tokens(list(inserts) + kept),
    )


def plan_trim(messages: Iterable[Any], *, keep_first: int = 2, keep_last: int = 10) -> MemoryPlan:
    """Memory TRIM: keep the first ``keep_first`` and last ``keep_last`` rows, delete the middle.

    Args:
        messages: Stored rows (every message needs an ``id``), oldest first.
        keep_first: Rows kept from the start.
        keep_last: Rows kept from the end.

    Returns:
        The plan.

    Raises:
        StrategyConfigError: A count is negative or not an integer.
        StrategyInputError: A row cannot be converted or has no id.

    Example:
        >>> rows = [Message(Role.USER, f"m{i}", i) for i in range(1, 11)]
        >>> plan_trim(rows, keep_first=2, keep_last=3).delete_ids
        (3, 4, 5, 6, 7)
    """
    TrimConfig(keep_first, keep_last)
    msgs = _stored(messages)
    n = len(msgs)
    units = Units(msgs)
    head = units.end_of(keep_first - 1) if keep_first else 0
    tail = units.start_of(max(0, n - keep_last))
    return _plan("TRIM", msgs, (i < head or i >= tail for i in range(n)))


def plan_delete(messages: Iterable[Any], *, keep_latest: int = 50) -> MemoryPlan:
    """Memory DELETE: keep only the newest ``keep_latest`` rows.

    Args:
        messages: Stored rows, oldest first.
        keep_latest: Rows kept from the end.

    Returns:
        The plan.

    Raises:
        StrategyConfigError: ``keep_latest`` is negative or not an integer.
        StrategyInputError: A row cannot be converted or has no id.

    Example:
        >>> rows = [Message(Role.USER, f"m{i}", i) for i in range(1, 9)]
        >>> plan_delete(rows, keep_latest=5).delete_ids
        (1, 2, 3)
    """
    DeleteConfig(keep_latest)
    msgs = _stored(messages)
    n = len(msgs)
    start = Units(msgs).start_of(max(0, n - keep_latest))
    return _plan("DELETE", msgs, (i >= start for i in range(n)))


def plan_filter(messages: Iterable[Any], *, predicate: Callable[[Message], bool] | FilterRules) -> MemoryPlan:
    """Memory FILTER: delete the rows that do not satisfy ``predicate``.

    Args:
        messages: Stored rows.
        predicate: A callable (library use) or :class:`FilterRules` (built from JSON by the API/UI).

    Returns:
        The plan.

    Raises:
        StrategyInputError: A row cannot be converted or has no id.

    Example:
        >>> rows = [Message(Role.USER, "q", 1), Message(Role.TOOL, "{}", 2)]
        >>> plan_filter(rows, predicate=lambda m: m.role is not Role.TOOL).delete_ids
        (2,)
    """
    if isinstance(predicate, FilterRules):
        predicate = predicate.predicate()
    if not callable(predicate):
        raise StrategyConfigError("predicate", "must be callable or FilterRules")
    msgs = _stored(messages)
    keep = [bool(predicate(m)) for m in msgs]
    for start, end in Units(msgs).spans():
        if end - start > 1:
            keep[start:end] = [any(keep[start:end])] * (end - start)
    return _plan("FILTER", msgs, keep)


def plan_summarize(
    messages: Iterable[Any],
    *,
    threshold: int = 20,
    keep_last: int = 6,
    summarizer: Summarizer,
    trigger_tokens: int = 0,
    trigger_fraction: float = 0.0,
    window_tokens: int = 0,
    summary_prompt: str = "",
    trigger_combine: str = "any",
) -> MemoryPlan:
    """Memory SUMMARIZE: replace all but the last ``keep_last`` rows by one stored summary.

    The summary row is a SYSTEM message with content ``"[持久化记忆摘要] " + summary``, metadata
    ``{"summary": True, "summarized_ids": [...]}`` and the smallest deleted id, so it sorts in place.
    The prompt is :data:`MEMORY_SUMMARY_INSTRUCTION`.

    Args:
        messages: Stored rows, oldest first.
        threshold: At or below this many rows the plan is empty (no LLM call).
        keep_last: Newest rows kept.
        summarizer: The summarizer to call.
        trigger_tokens, trigger_fraction, window_tokens, trigger_combine: Further triggers and how they
            combine, as for the context SUMMARIZE.
        summary_prompt: The instruction for the summarizer; empty: :data:`MEMORY_SUMMARY_INSTRUCTION`.

    Returns:
        The plan. Deleting is irreversible, so if the summarizer fails the plan is EMPTY (nothing is
        deleted) and ``fallback`` says why.

    Raises:
        StrategyConfigError: A count is negative or not an integer.
        StrategyInputError: A row cannot be converted or has no id.

    Example:
        >>> rows = [Message(Role.USER, f"I prefer tea, note {i}.", i) for i in range(1, 31)]
        >>> plan = plan_summarize(rows, threshold=20, keep_last=6, summarizer=OfflineSummarizer())
        >>> plan.inserts[0].content.startswith("[持久化记忆摘要] ")
        True
    """
    config = SummarizeConfig(threshold, keep_last, trigger_tokens, trigger_fraction, window_tokens, summary_prompt,
                             trigger_combine)
    msgs = _stored(messages)
    n = len(msgs)
    if keep_last >= n or not config.triggered(n, total_tokens(msgs)):
        return _plan("SUMMARIZE", msgs, [True] * n)
    cut = Units(msgs).start_of(n - keep_last)
    if cut <= 0:
        return _plan("SUMMARIZE", msgs, [True] * n)
    summary, failure = call_summarizer(
        summarizer, cut_conversation_text(msgs[:cut]), summary_prompt or MEMORY_SUMMARY_INSTRUCTION
    )
    if failure is not None:
        tokens = total_tokens(msgs)
        return MemoryPlan(
            "SUMMARIZE", (), (), tuple(sorted(m.id for m in msgs)), 1,  # type: ignore[misc]
            Fallback("nothing_deleted", *failure), tokens, tokens,
        )
    summarized_ids = sorted(m.id for m in msgs[:cut])  # type: ignore[type-var]
    row = Message(
        Role.SYSTEM,
        MEMORY_SUMMARY_PREFIX + summary,  # type: ignore[operator]
        summarized_ids[0],
        {"summary": True, "summarized_ids": summarized_ids},
    )
    return _plan("SUMMARIZE", msgs, [i >= cut for i in range(n)], inserts=(row,), llm_calls=1)


def plan_memory(
    name: str,
    messages: Iterable[Any],
    params: Mapping[str, Any] | None = None,
    *,
    summarizer: Summarizer | None = None,
    predicate: Callable[[Message], bool] | None = None,
) -> MemoryPlan:
    """Plan a memory strategy by name, with parameters from JSON (the API and playground entry point).

    Args:
        name: ``"trim"``, ``"SUMMARIZE"``, ``"delete"``, ``"filter"`` (any case).
        messages: Stored rows (with ids), oldest first.
        params: JSON parameters; for FILTER the :class:`FilterRules` fields (``keep_roles``,
            ``assistant_keywords``, ``keep_tool``, ``min_length``).
        summarizer: For SUMMARIZE; ``None`` means :class:`OfflineSummarizer`.
        predicate: For FILTER from code: overrides ``params`` (which must then be empty).

    Returns:
        The :class:`MemoryPlan`.

    Raises:
        StrategyConfigError: Unknown strategy (``field="name"``) or bad parameters.
        StrategyInputError: A row cannot be converted or has no id.

    Example:
        >>> rows = [Message(Role.USER, f"m{i}", i) for i in range(1, 9)]
        >>> plan_memory("delete", rows, {"keep_latest": 5}).delete_ids
        (1, 2, 3)
    """
    canonical = normalize_name(name, "memory")
    if canonical == "FILTER" and predicate is not None:
        if params:
            raise StrategyConfigError("params", "give either a predicate or filter rules, not both")
        return plan_filter(messages, predicate=predicate)
    config = parse_params(canonical, params)
    if canonical == "TRIM":
        return plan_trim(messages, keep_first=config.keep_first, keep_last=config.keep_last)
    if canonical == "DELETE":
        return plan_delete(messages, keep_latest=config.keep_latest)
    if canonical == "FILTER":
        return plan_filter(messages, predicate=config)
    return plan_summarize(messages, **asdict(config), summarizer=summarizer or OfflineSummarizer())
