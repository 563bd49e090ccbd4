""""Erase all my data" and support's erase for a privacy request: one confirmation page, one service.

The page lists, table by table in words, what ``ltm.user_data.user_data_erase`` removes (the same sections
the export lists), says that there is no undo, and asks for a ticked box; without it the POST is a 400
naming the field and nothing changes.
"""

from __future__ import annotations

from django.shortcuts import render
from django.utils.translation import gettext as _

from memoryboard.ltm.user_data import user_data_counts

CONFIRM_FIELD = "confirm"


def confirmed(request) -> bool:
    return request.POST.get(CONFIRM_FIELD) == "yes"


def erase_page(request, *, user_id: str, own: bool, person=None, post_url: str, cancel_url: str,
               error: str = "", status: int = 200):
    rows = user_data_counts(user_id=user_id)
    return render(request, "web/data_erase.html", {
        "own": own, "person": person, "rows": rows, "post_url": post_url, "cancel_url": cancel_url,
        "error": error, "field": CONFIRM_FIELD,
        "anything": any(n for key, _label, n in rows if key != "audit_log"),
    }, status=status)


def not_confirmed_error() -> str:
    return _("Confirm: tick the box to erase; nothing was erased.")
