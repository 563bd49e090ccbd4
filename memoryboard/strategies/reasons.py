"""Why a strategy dropped, cleared or summarized each message, read from its result object.

Nothing is recomputed: the result says what happened to each input index; this module names the rule
behind it (the strategy, the step of a COMPOSITE, the fallback) and whether the message went with its tool
call or results rather than on its own account. The playground shows these next to each message.
"""

from __future__ import annotations

from collections.abc import Sequence

from .formats import has_thinking
from .messages import Message, Role
from .result import ContextResult
from .units import Units

__all__ = ["REASONS", "mid_exchange_start", "reasons"]

# Codes and their English text; the web layer translates them by code.
REASONS = {
    "fallback": "the summarizer failed: only the first messages were kept",
    "outside_keep": "outside keep_first / keep_last",
    "over_budget": "over the token budget (the newest messages that fit were kept)",
    "summarized": "folded into the summary (above the trigger)",
    "old_tool_result": "an old tool result, cleared (only the newest ones are kept)",
    "tool_input": "the arguments of a cleared call",
    "old_thinking": "older thinking blocks, cleared (only the newest turns keep theirs)",
    "with_its_unit": "dropped with its tool call or its results (they go together)",
}

_DROP_RULE = {"TRIM": "outside_keep", "SLIDING_WINDOW": "over_budget", "SUMMARIZE": "fallback"}


def _own_rule(result: ContextResult) -> str:
    if result.fallback:
        return "fallback"
    return _DROP_RULE.get(result.strategy, "over_budget")


def _step_reasons(step: ContextResult, msgs: Sequence[Message]) -> dict[int, str]:
    """Reasons of one plain strategy's result, indexes relative to its own input ``msgs``."""
    out: dict[int, str] = {}
    rule = _own_rule(step)
    units = Units(msgs)
    for i in step.dropped:
        start, end = units.start_of(i), units.end_of(i)
        # A message that is not its unit's deciding member went because its partner did.
        alone = end - start == 1
        out[i] = rule if alone or i == start else "with_its_unit"
    for i in step.summarized:
        out[i] = "summarized"
    for i in step.cleared:
        if msgs[i].role is Role.ASSISTANT:
            out[i] = "old_thinking" if has_thinking(msgs[i]) else "tool_input"
        else:
            out[i] = "old_tool_result"
    return out


def reasons(result: ContextResult, messages: Sequence[Message]) -> dict[int, str]:
    """The reason code of every dropped, summarized or cleared input index.

    For COMPOSITE, the first step that did not keep a message gives its reason.

    Args:
        result: A context strategy's result.
        messages: The input it ran on (the same sequence, so indexes agree).

    Returns:
        Input index → a key of :data:`REASONS`.
    """
    if not result.steps:
        return _step_reasons(result, messages)
    # Follow each original index through the steps: the first step that does not keep it decides.
    out: dict[int, str] = {}
    first = result.steps[0]
    # Steps run on the messages after a system prompt kept aside (behind_system_prompt shifts only the
    # combined result): their indexes start ``offset`` later.
    offset = len(messages) - (len(first.kept) + len(first.dropped) + len(first.summarized) + len(first.cleared))
    current: list[int] = list(range(offset, len(messages)))  # current position -> original index
    inputs: Sequence[Message] = messages[offset:]
    for step in result.steps:
        step_reasons = _step_reasons(step, inputs)
        for position, code in step_reasons.items():
            original = current[position]
            if original not in out:
                out[original] = code
        folded = [current[j] for j in step.summarized]
        current = [current[s] if s is not None else (folded[0] if folded else -1) for s in step.sources]
        inputs = step.messages
    present = set(result.kept)
    return {i: code for i, code in out.items() if i not in present}


def mid_exchange_start(result: ContextResult, messages: Sequence[Message]) -> int | None:
    """The input index of a kept assistant reply whose user question was dropped, at the start of the
    kept part (after the system prompt and any summary): the model sees an answer without its question.
    ``None`` when the kept part starts cleanly."""
    gone = set(result.dropped)
    if not gone:
        return None
    for source in result.sources:
        if source is None or messages[source].role is Role.SYSTEM:
            continue
        if messages[source].role is not Role.ASSISTANT:
            return None
        previous = source - 1
        return source if previous >= 0 and previous in gone else None
    return None
