""""My memories": the export a person can read: their memories by state and type (in the one vocabulary of
states), their conversations as text, and what was done with their data and when, as a printable page next
to the machine JSON (``data.memory_export``). The numbers are those the JSON's ``summary`` holds."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from memoryboard.agents_config import agent_labels
from memoryboard.ltm.people.user_data import audit_trail, conversation_ids, export_summary
from memoryboard.ltm.store.states import STORED_STATES, state_q
from memoryboard.models import ChatMessage, MemoryType
from memoryboard.roles import platform_user_id
from memoryboard.shared.item_words import describe, state_title
from memoryboard.web.my_memories.common import own_items, with_labels

# The roles a person reads as the conversation; the others (tool results, instructions) are counted.
SHOWN_ROLES = (ChatMessage.Role.USER, ChatMessage.Role.ASSISTANT)
AUDIT_SHOWN = 500


def _memories(request, user_id: str) -> list[dict]:
    states = []
    types = dict(MemoryType.choices)
    for state in STORED_STATES:
        items = list(own_items(request).filter(state_q(state)).order_by("created_at", "id"))
        if not items:
            continue
        describe(with_labels(items), user_id=user_id, own=True)
        groups = []
        for code in [*MemoryType.values, ""]:
            group = [m for m in items if (m.memory_type if m.memory_type in MemoryType.values else "") == code]
            if group:
                groups.append({"label": types.get(code, _("Other")), "items": group})
        states.append({"state": str(state), "title": state_title(state, own=True), "count": len(items),
                       "groups": groups})
    return states


def _conversations(user_id: str) -> list[dict]:
    labels = agent_labels()
    messages = ChatMessage.objects.filter(user_id=user_id).order_by("conversation_id", "created_at", "id")
    by_id: dict[str, dict] = {cid: {"id": cid, "agent": "", "lines": [], "other": 0, "started": None}
                              for cid in sorted(conversation_ids(user_id=user_id))}
    for message in messages.iterator():
        conversation = by_id.setdefault(message.conversation_id, {"id": message.conversation_id, "agent": "",
                                                                  "lines": [], "other": 0, "started": None})
        conversation["agent"] = conversation["agent"] or labels.get(message.agent_id, message.agent_id)
        conversation["started"] = conversation["started"] or message.created_at
        if message.role in SHOWN_ROLES:
            who = _("You") if message.role == ChatMessage.Role.USER else conversation["agent"] or _("The agent")
            conversation["lines"].append({"who": who, "when": message.created_at, "text": message.content})
        else:
            conversation["other"] += 1
    return sorted(by_id.values(), key=lambda c: (c["started"] is None, c["started"] or timezone.now()))


def _done(request, user_id: str) -> list[dict]:
    rows = []
    for entry in audit_trail(user_id=user_id, limit=AUDIT_SHOWN):
        if entry.actor_id and entry.actor_id == request.user.pk:
            who = _("you")
        elif entry.actor_id:
            who = _("support")
        else:
            who = entry.actor_text
        rows.append({"when": entry.created_at, "who": who, "what": entry.get_action_display(),
                     "why": entry.reason_label, "item": entry.item_text})
    return rows


@login_required
@require_GET
def memory_export_page(request):
    """Everything stored about the signed-in user, in words, printable."""
    user_id = platform_user_id(request.user)
    summary = export_summary(user_id=user_id)
    return render(request, "web/my_data_export.html", {
        "exported_at": timezone.now(),
        "memory_states": _memories(request, user_id),
        "memories_total": sum(summary["memories"].values()),
        "conversations": _conversations(user_id),
        "conversations_total": summary["conversations"],
        "done": _done(request, user_id),
        "audit_total": summary["audit_entries"],
    })
