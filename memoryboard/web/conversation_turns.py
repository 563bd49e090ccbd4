"""Tool-call turns of a stored conversation in words, for the person it belongs to.

An assistant row that called tools (``metadata.tool_calls``: memory tools as ``{name, arguments, result}``
records, the caller's own tools in OpenAI's shape) and a TOOL row (its content a tool's JSON answer) would
show as an empty bubble and raw JSON. Each gets ``tool_lines``: one sentence per call ("Looked in your
memories for “tea”: 3 results"), with the found texts to expand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.utils.translation import gettext as _, ngettext


@dataclass
class ToolLine:
    text: str
    details: list[str] = field(default_factory=list)


def _arguments(raw) -> dict:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _result_line(name: str, arguments: dict, result) -> ToolLine:
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            return ToolLine(_("%(tool)s answered.") % {"tool": _tool_words(name)}, [result[:500]])
    if isinstance(result, dict) and result.get("error"):
        return ToolLine(_("%(tool)s failed.") % {"tool": _tool_words(name)})
    if name == "memory_save" and isinstance(result, dict):
        content = str(arguments.get("content") or "")
        if result.get("saved") is False:
            return ToolLine(_("Did not save a memory (already known or saving is off)."), [content] if content else [])
        return ToolLine(_("Saved a memory."), [content] if content else [])
    items = result.get("results") if isinstance(result, dict) else result if isinstance(result, list) else None
    if isinstance(items, list):
        texts = [str(i.get("content") or i.get("text") or i.get("title") or "") if isinstance(i, dict) else str(i)
                 for i in items]
        query = str(arguments.get("query") or "")
        count = ngettext("%(n)d result", "%(n)d results", len(items)) % {"n": len(items)}
        if name == "memory_search":
            text = (_("Looked in your memories for “%(query)s”: %(count)s") % {"query": query, "count": count}
                    if query else _("Looked in your memories: %(count)s") % {"count": count})
        else:
            text = _("%(tool)s: %(count)s") % {"tool": _tool_words(name), "count": count}
        return ToolLine(text, [t for t in texts if t][:20])
    return ToolLine(_("%(tool)s answered.") % {"tool": _tool_words(name)})


def _tool_words(name: str) -> str:
    if name == "memory_search":
        return _("Looking in your memories")
    if name == "memory_save":
        return _("Saving a memory")
    return _("The tool “%(name)s”") % {"name": name or "?"}


def describe_turns(messages) -> None:
    """Set ``tool_lines`` on assistant rows that called tools and ``tool_result`` on TOOL rows answering
    a call of an assistant row on the same page (shown with the call instead of as raw JSON)."""
    calls_by_id: dict[str, tuple[str, dict]] = {}
    rows = list(messages)
    for row in rows:
        row.tool_lines = []
        row.tool_result = None
        calls = (row.metadata or {}).get("tool_calls") if isinstance(row.metadata, dict) else None
        for call in calls or []:
            if not isinstance(call, dict):
                continue
            if "function" in call:  # the caller's own tool, answered by a later TOOL row
                function = call.get("function") or {}
                name, arguments = str(function.get("name") or ""), _arguments(function.get("arguments"))
                calls_by_id[str(call.get("id") or "")] = (name, arguments)
                row.tool_lines.append(ToolLine(_("Asked the app to run the tool “%(name)s”.") % {"name": name or "?"}))
            else:
                row.tool_lines.append(_result_line(str(call.get("name") or ""), _arguments(call.get("arguments")),
                                                   call.get("result")))
    for row in rows:
        if row.role == "TOOL":
            call_id = str((row.metadata or {}).get("tool_call_id") or "") if isinstance(row.metadata, dict) else ""
            name, arguments = calls_by_id.get(call_id, ("", {}))
            row.tool_result = _result_line(name, arguments, row.content or "")
