"""Messages as the playground shows them: rows with their status and why, runs collapsed, ids as ranges.

Read from the strategies' result objects (``sources``, ``summarized``, ``cleared``); nothing recomputed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.utils.translation import gettext as _

from memoryboard.models.labels import json_words
from memoryboard.strategies import Message
from memoryboard.strategies.reasons import mid_exchange_start, reasons
from memoryboard.strategy_texts import reason_label

PREVIEW_CHARS = 280  # longer content is cut, the full text sits behind a <details> toggle
COLLAPSE_RUN = 4  # runs of dropped/summarized messages longer than this collapse into one line
MAX_SHOWN_IN_RUN = 10  # at most this many messages listed inside a collapsed run
KEPT_EDGE = 15  # a kept run longer than 2*KEPT_EDGE shows its edges and collapses the middle


@dataclass
class Row:
    index: int | None  # the input position (0 first; shown as #1); None for a produced summary
    role: str
    content: str
    status: str  # input, kept, dropped, summarized, summary, cleared
    row_id: int | None = None  # the stored row's id (memory plans)
    calls: tuple = ()  # the tool calls of an assistant message (ToolCall: id, name, arguments)
    answers: str = ""  # for a tool result: "name (call id)" of the call it answers
    reason: str = ""  # why it was dropped, summarized or cleared (translated text)
    answered: str = ""  # for a tool result: the name of the tool it answers (``answers`` without ids)

    @property
    def long(self) -> bool:
        return len(self.content) > PREVIEW_CHARS

    @property
    def preview(self) -> str:
        return self.content[:PREVIEW_CHARS]


@dataclass
class Segment:
    status: str
    rows: list[Row]
    collapsed: bool = False
    count: int = 0
    hidden: int = 0  # rows of a collapsed run not listed at all
    first: int | None = None
    last: int | None = None
    children: list[Segment] = field(default_factory=list)


def _runs(rows: list[Row]) -> list[list[Row]]:
    runs: list[list[Row]] = []
    for row in rows:
        if runs and runs[-1][0].status == row.status:
            runs[-1].append(row)
        else:
            runs.append([row])
    return runs


def _collapsed(run: list[Row], limit: int | None = MAX_SHOWN_IN_RUN) -> Segment:
    shown = run[:limit] if limit is not None else run
    return Segment(run[0].status, shown, collapsed=True, count=len(run), hidden=len(run) - len(shown),
                   first=run[0].index, last=run[-1].index)


def segments(rows: list[Row], *, everything: bool = False) -> list[Segment]:
    """Group rows for display: long runs of dropped/summarized rows (and the middle of very long kept
    runs) collapse into one ``<details>`` line with a count, so big conversations stay light.
    ``everything``: a collapsed run of dropped/summarized rows lists all of them (the column's "show all")."""
    out: list[Segment] = []
    for run in _runs(rows):
        status = run[0].status
        if status in ("dropped", "summarized") and len(run) > COLLAPSE_RUN:
            out.append(_collapsed(run, None if everything else MAX_SHOWN_IN_RUN))
        elif len(run) > 2 * KEPT_EDGE:
            out.append(Segment(status, run[:KEPT_EDGE]))
            out.append(_collapsed(run[KEPT_EDGE:-KEPT_EDGE]))
            out.append(Segment(status, run[-KEPT_EDGE:]))
        else:
            out.append(Segment(status, run))
    return out


_ROLE_CODES: dict[Any, str] = {}  # Enum.value is slow (a descriptor call): a 10k-message page reads it 60k times


def role_code(role: Any) -> str:
    code = _ROLE_CODES.get(role)
    if code is None:
        code = _ROLE_CODES.setdefault(role, str(getattr(role, "value", role)).upper())
    return code


def role_of(message: Any) -> str:
    return role_code(message["role"] if isinstance(message, dict) else message.role)


def _content(message: Any) -> str:
    return message["content"] if isinstance(message, dict) else message.content


def tool_names(messages: Sequence[Message]) -> dict[str, str]:
    return {c.id: c.name for m in messages if getattr(m, "tool_calls", ()) for c in m.tool_calls}


def message_row(index: int | None, message: Any, status: str, names: dict[str, str]) -> Row:
    """A message as a row: its tool calls listed (collapsed in the page), a result naming its call."""
    calls = getattr(message, "tool_calls", ())
    answered = getattr(message, "result_ids", ())
    answers = ", ".join(f"{names.get(rid, '?')} ({rid})" for rid in answered)
    return Row(index, role_of(message), _content(message), status, calls=calls, answers=answers,
               answered=", ".join(names.get(rid, "?") for rid in answered))


def row_for_reader(row: Row, show_ids: bool) -> Row:
    """A row as shown to its reader: developers read it as stored; support staff read a tool's JSON answer
    and a call's arguments in words ("key: value"), and no call ids."""
    if show_ids or not (row.calls or row.role == "TOOL"):
        return row
    content = (json_words(row.content) or row.content) if row.role == "TOOL" else row.content
    calls = tuple(c._replace(id="", arguments=json_words(c.arguments) or c.arguments) for c in row.calls)
    return replace(row, content=content, calls=calls, answers=row.answered)


def input_rows(messages: Sequence[Message]) -> list[Row]:
    """The shared "Before" column: the input, numbered by position."""
    names = tool_names(messages)
    return [message_row(i, m, "input", names) for i, m in enumerate(messages)]


def result_rows(messages: Sequence[Message], result) -> list[Row]:
    """A strategy's result in input order: each input message with what happened to it (kept, dropped,
    summarized, cleared) and why, and each produced summary where it sits in the output. Read from the
    result object's ``sources`` / ``summarized`` / ``cleared``, nothing recomputed."""
    summarized, cleared = set(result.summarized), set(result.cleared)
    why = {i: reason_label(code) for i, code in reasons(result, messages).items()}
    names = tool_names(messages)
    rows: list[Row] = []
    nxt = 0  # next input position not yet shown

    def skipped(upto: int) -> None:
        for i in range(nxt, upto):
            row = message_row(i, messages[i], "summarized" if i in summarized else "dropped", names)
            row.reason = why.get(i, "")
            rows.append(row)

    for out, src in zip(result.messages, result.sources):
        if src is None:
            rows.append(message_row(None, out, "summary", names))
            continue
        skipped(src)
        row = message_row(src, out, "cleared" if src in cleared else "kept", names)
        row.reason = why.get(src, "") if src in cleared else ""
        rows.append(row)
        nxt = max(nxt, src + 1)
    skipped(len(messages))
    return rows


def mid_exchange_note(messages: Sequence[Message], result) -> str | None:
    """A warning when the kept part starts with an assistant reply whose question was dropped."""
    index = mid_exchange_start(result, messages)
    if index is None:
        return None
    return _("The kept part starts at #%(n)s, an assistant reply whose question was dropped: the model sees "
             "an answer without its question.") % {"n": index + 1}


def discarded_work(result) -> list[str]:
    """Honest notes on a COMPOSITE whose step's work a later step threw away (e.g. SUMMARIZE paid for a
    summary that SLIDING_WINDOW then dropped), read from the steps' own results."""
    notes = []
    steps = list(result.steps)
    for j, step in enumerate(steps):
        for position, src in enumerate(step.sources):
            if src is not None:
                continue
            for later in steps[j + 1:]:
                if position in later.dropped:
                    notes.append(
                        _("%(step)s made a summary (%(calls)s summary call) that %(later)s then dropped: "
                          "that work is discarded. Raise the budget or lower %(step)s's keep last.")
                        % {"step": step.strategy, "calls": step.llm_calls, "later": later.strategy}
                    )
                    break
                position = later.sources.index(position) if position in later.sources else None
                if position is None:
                    break
    return notes


def param_text(params: dict, prefix: str = "") -> str:
    """``keep_first=2 · keep_last=37``; for COMPOSITE only its steps' parameters."""
    steps = {str(step).lower() for step in params.get("steps") or ()} if not prefix else set()
    parts = []
    for key, value in params.items():
        if steps and isinstance(value, dict) and key not in steps:
            continue
        if isinstance(value, dict):
            parts.append(param_text(value, f"{prefix}{key}."))
        elif value in ([], (), "", None):
            continue
        else:
            parts.append(f"{prefix}{key}={', '.join(map(str, value)) if isinstance(value, list) else value}")
    return " · ".join(p for p in parts if p)


def compact_ids(ids: Sequence[int]) -> str:
    """Ascending ids as ranges, ``"1-3,7,9-12"``: a 10,000-row plan stays a few bytes in the page."""
    parts: list[str] = []
    start = prev = None
    for i in ids:
        if prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


MAX_PARSED_IDS = 200_000  # a plan's deletions; more is not a conversation the playground shows


def parse_ids(text: str) -> list[int] | None:
    """The inverse of :func:`compact_ids`; ``None`` if the text is not a list of ids and ranges, or if
    it lists more than :data:`MAX_PARSED_IDS` ids in total (``1-9999999,1-9999999,…`` in a few bytes)."""
    out: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            low, _, high = part.partition("-")
            first, last = int(low), int(high or low)
            if last < first or len(out) + (last - first + 1) > MAX_PARSED_IDS:
                return None
            out.extend(range(first, last + 1))
    except ValueError:
        return None
    return out
