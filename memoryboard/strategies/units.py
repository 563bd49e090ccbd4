"""Units: what every strategy keeps or drops whole.

A unit is an assistant message with tool calls together with the messages that answer them (OpenAI
``tool`` messages, Anthropic user turns holding ``tool_result`` blocks); every other message is a unit of
its own. Keeping or dropping units, never loose messages, is what guarantees that no output holds a tool
result whose call is gone, or a call whose results are gone. A call still waiting for its result (the
last message of a trace) is a unit by itself. A result that names an unknown call is a unit by itself; a
result that names a call further back (only a malformed trace does that) merges everything since that
call into the call's unit, so the pair still cannot be split.

How a unit counts (docs/decisions.md): TRIM's ``keep_first`` / ``keep_last`` and SUMMARIZE's
``keep_last`` count messages, and a unit the cut would split is kept whole (so a few more messages than
asked may be kept); SLIDING_WINDOW adds a unit's tokens (the sum of its messages') and stops at the first
unit that does not fit, so the budget is never exceeded. Plain messages are units of one: the design's
examples are unchanged.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from operator import attrgetter

from .messages import Message

__all__ = ["unit_starts", "Units"]

_TOOL_CALLS = attrgetter("tool_calls")
_RESULT_IDS = attrgetter("result_ids")


def unit_starts(msgs: Sequence[Message]) -> list[int] | None:
    """The index where each unit starts, ascending; ``None`` when every message is its own unit.

    Example:
        >>> from memoryboard.strategies.messages import Role, ToolCall
        >>> call = Message(Role.ASSISTANT, "", tool_calls=(ToolCall("c1", "f"),))
        >>> unit_starts([Message(Role.USER, "q"), call, Message(Role.TOOL, "r", result_ids=("c1",))])
        [0, 1]
    """
    # any() over attrgetter runs in C: plain conversations (TRIM's common case) pay ~1/10 of a Python pass.
    if not any(map(_TOOL_CALLS, msgs)) and not any(map(_RESULT_IDS, msgs)):
        return None
    starts: list[int] = []
    call_unit: dict[str, int] = {}
    for i, m in enumerate(msgs):
        target = None
        if m.result_ids:
            for rid in m.result_ids:
                s = call_unit.get(rid)
                if s is not None and (target is None or s < target):
                    target = s
        if target is None:
            starts.append(i)
        else:
            while starts[-1] > target:
                starts.pop()
        if m.tool_calls:
            s = starts[-1]
            for call in m.tool_calls:
                call_unit[call.id] = s
    return starts


class Units:
    """The units of a message list, for snapping a cut to a unit boundary.

    Args:
        msgs: The messages.
    """

    __slots__ = ("n", "starts")

    def __init__(self, msgs: Sequence[Message]) -> None:
        self.n = len(msgs)
        self.starts = unit_starts(msgs)

    def start_of(self, index: int) -> int:
        """The first index of the unit holding ``index`` (``index`` itself for plain messages)."""
        if self.starts is None or index <= 0 or index >= self.n:
            return index
        return self.starts[bisect_right(self.starts, index) - 1]

    def end_of(self, index: int) -> int:
        """One past the last index of the unit holding ``index``."""
        if self.starts is None or index < 0 or index >= self.n:
            return index + 1
        k = bisect_right(self.starts, index)
        return self.starts[k] if k < len(self.starts) else self.n

    def sizes(self, lengths: Sequence[int]) -> list[int] | None:
        """Per unit, the sum of ``lengths`` of its messages (``None`` when units are single messages)."""
        if self.starts is None:
            return None
        bounds = self.starts + [self.n]
        return [sum(lengths[a:b]) for a, b in zip(bounds, bounds[1:])]

    def spans(self) -> list[tuple[int, int]]:
        """Every unit as ``(start, end)``."""
        bounds = (self.starts if self.starts is not None else list(range(self.n))) + [self.n]
        return list(zip(bounds, bounds[1:]))
