"""The context window viewer of a stored conversation on the playground: what the model receives before
and after the pipeline (developers read it as sent, support staff in words)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _

from memoryboard import conversations
from memoryboard.agents_config import get_agents_config
from memoryboard.models import LongTermMemory
from memoryboard.roles import is_developer
from memoryboard.strategies import Message, to_messages
from memoryboard.web.context_viewer import context_window, prompt_in_words, tools_in_words
from memoryboard.web.playground.rows import Segment, message_row, segments, tool_names


def _window_rows(side, memories: list, *, show_ids: bool) -> list[Segment]:
    """One side of the context window as rows: the agent's system prompt (built for the call, not a stored
    message; its memory block in words for support staff), then the messages with their tool calls."""
    messages = to_messages(side.messages)
    names = tool_names(messages)
    rows = []
    for i, (message, position) in enumerate(zip(messages, side.positions)):
        row = message_row(position, message, "kept" if position is not None else ("input" if i == 0 else "summary"), names)
        if i == 0 and not show_ids:
            row.content = prompt_in_words(row.content, memories)
        rows.append(row)
    return segments(rows)


def window_context(request, conversation_id: str, messages: Sequence[Message],
                   strategies: list[tuple[str, dict]] | None = None) -> dict[str, Any]:
    """The context window viewer of a stored conversation, for the agent in ``?agent=`` (default: its own).

    Developers read what the model receives (the tools' JSON, the memory block, the receipt's item ids);
    support staff read the same request in words: the tools as a list, the memories and receipt by text.
    ``strategies``: ``(name, params)`` of the playground's columns: the request's parts after each one too."""
    first = conversations.message_queryset_for(request.user).filter(conversation_id=conversation_id).first()
    config = get_agents_config()
    agent_id = request.GET.get("agent") or first.agent_id
    agent = config.get(agent_id)
    if agent is None:
        agent_id = first.agent_id
        agent = config.get(agent_id) or config.defaults
    window = context_window(agent=agent, user_id=first.user_id, conversation_id=conversation_id, rows=messages,
                            strategies=strategies)
    show_ids = is_developer(request.user)
    receipt_rows = window.receipt.candidate_rows() if window.receipt is not None else []
    if not show_ids and receipt_rows:
        texts = {item.memory.pk: item.memory.content for item in window.memories}
        missing = {row.get("id") for row in receipt_rows} - set(texts)
        texts.update((pk, (value or {}).get("content", "") if isinstance(value, dict) else "") for pk, value in
                     LongTermMemory.objects.filter(pk__in=missing).values_list("pk", "value_json"))
        receipt_rows = [{**row, "text": texts.get(row.get("id"), "")} for row in receipt_rows]
    return {
        "data": window,
        "agent_id": agent_id,
        "agents": [(a, cfg.label) for a, cfg in sorted(config.agents.items())],
        "show_ids": show_ids,
        # Each side is the agent's system prompt and then the messages: counted as the conversation list
        # counts them, the prompt named beside the count.
        "sides": [(label, side, _window_rows(side, window.memories, show_ids=show_ids), len(side.messages) - 1)
                  for label, side in ((_("Before the pipeline"), window.before),
                                      (_("After the pipeline"), window.after))],
        "tools_json": json.dumps(window.tools, ensure_ascii=False, indent=2) if show_ids else "",
        "tools_words": [] if show_ids else tools_in_words(window.tools),
        "receipt_rows": receipt_rows,
    }
