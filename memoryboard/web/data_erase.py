""""Erase all my data" and support's erase for a privacy request: one confirmation page, one service.

The page lists, table by table in words, what ``ltm.people.user_data.user_data_erase`` removes (the same
sections the export lists), says that there is no undo, and asks for a ticked box; without it the POST is a 400
naming the field and nothing changes.
"""

from __future__ import annotations

from django.shortcuts import render
from django.utils.translation import gettext as _

from memoryboard.ltm.people.previews import user_data_erase_preview
from memoryboard.ltm.people.user_data import (
    SUPPORT_LABELS,
    audit_kept_counts,
    conversation_ids,
    user_data_counts,
    user_data_sections,
)

CONFIRM_FIELD = "confirm"
LISTED_ITEMS = 200  # memories named on the page; the table's counts cover them all


def conversation_count(*, user_id: str) -> int:
    """The person's conversations as every page counts them (``user_data.conversation_ids``)."""
    return len(conversation_ids(user_id=user_id))


def confirmed(request) -> bool:
    return request.POST.get(CONFIRM_FIELD) == "yes"


def erase_page(request, *, user_id: str, own: bool, person=None, post_url: str, cancel_url: str,
               error: str = "", status: int = 200):
    # The erase itself, rolled back: its counts per table and the items it removes, by their text.
    preview = user_data_erase_preview(user_id=user_id, actor=request.user)
    tables = {section.key: section.table for section in user_data_sections()}
    removed = preview.outcome.removed
    rows = []
    for key, label, n in user_data_counts(user_id=user_id):
        label = str(SUPPORT_LABELS.get(key, label)) if not own else label
        if key == "conversations":
            n = conversation_count(user_id=user_id)
        if key == "audit_log":  # two numbers: what stays on the trail, what is no longer linked to the person
            on_trail, unlinked = audit_kept_counts(user_id=user_id)
            rows.append((key, _("audit log entries about you yourself (exports, erasures, settings): kept "
                                "without content, still shown as yours") if own else
                         _("audit log entries about the person themself (exports, erasures, settings): kept "
                           "without content, still on their page"), on_trail))
            rows.append(("audit_log_unlinked", _("audit log entries about your items and conversations: kept "
                                                 "without content or any link to you") if own else
                         _("audit log entries about their items and conversations: kept without content or "
                           "any link to them"), unlinked))
            continue
        rows.append((key, label, n if key == "conversations" else preview.tables.get(tables.get(key), n)))
    return render(request, "web/data_erase.html", {
        "removed": removed[:LISTED_ITEMS], "more_removed": max(0, len(removed) - LISTED_ITEMS),
        "own": own, "person": person, "rows": rows, "post_url": post_url, "cancel_url": cancel_url,
        "error": error, "field": CONFIRM_FIELD,
        "anything": any(n for key, _label, n in rows if not key.startswith("audit_log")),
    }, status=status)


def not_confirmed_error() -> str:
    return _("Confirm: tick the box to erase; nothing was erased.")
