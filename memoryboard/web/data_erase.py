""""Erase all my data" and support's erase for a privacy request: one confirmation page, one service.

The page lists, table by table in words, what ``ltm.people.user_data.user_data_erase`` removes (the same
sections the export lists), says that there is no undo, and asks for a ticked box; without it the POST is a 400
naming the field and nothing changes.
"""

from __future__ import annotations

from django.shortcuts import render
from django.utils.translation import gettext as _

from memoryboard.ltm.people.user_data import SUPPORT_LABELS, user_data_counts
from memoryboard.models import ChatMessage, ConversationOwner

CONFIRM_FIELD = "confirm"


def conversation_count(*, user_id: str) -> int:
    """The person's conversations as the user page lists them: every conversation with a stored message
    or a recorded owner (an owner row alone is written only when a conversation id is claimed)."""
    ids = set(ChatMessage.objects.filter(user_id=user_id).values_list("conversation_id", flat=True).distinct())
    ids |= set(ConversationOwner.objects.filter(user_id=user_id).values_list("conversation_id", flat=True))
    return len(ids)


def confirmed(request) -> bool:
    return request.POST.get(CONFIRM_FIELD) == "yes"


def erase_page(request, *, user_id: str, own: bool, person=None, post_url: str, cancel_url: str,
               error: str = "", status: int = 200):
    rows = [
        (key, str(SUPPORT_LABELS.get(key, label)) if not own else label,
         conversation_count(user_id=user_id) if key == "conversations" else n)
        for key, label, n in user_data_counts(user_id=user_id)
    ]
    return render(request, "web/data_erase.html", {
        "own": own, "person": person, "rows": rows, "post_url": post_url, "cancel_url": cancel_url,
        "error": error, "field": CONFIRM_FIELD,
        "anything": any(n for key, _label, n in rows if key != "audit_log"),
    }, status=status)


def not_confirmed_error() -> str:
    return _("Confirm: tick the box to erase; nothing was erased.")
