"""Everything stored about the user: the JSON export and "Erase all my data"."""

from __future__ import annotations

import json

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from memoryboard.ltm.people.user_data import memory_export_payload, user_data_erase
from memoryboard.roles import platform_user_id
from memoryboard.web import data_erase

# "Erase all my data" has no undo; its reason in the audit log:
ERASE_REASON = "erase all my data"


@login_required
@require_GET
def memory_export(request):
    """Everything stored about the user as a JSON download: all items (archived and deleted ones flagged),
    conversations and the other tables, exactly what "Erase all my data" removes."""
    body = json.dumps(memory_export_payload(user_id=platform_user_id(request.user)), ensure_ascii=False, indent=2)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="my-data.json"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def my_data_erase(request):
    """"Erase all my data": GET lists what goes, by kind, and says there is no undo; the POST with the box
    ticked erases it all in one transaction (``user_data.user_data_erase``); without it, a 400 naming
    the box, and nothing changes."""
    user_id = platform_user_id(request.user)
    page = {"user_id": user_id, "own": True, "post_url": reverse("my-data-erase"), "cancel_url": reverse("my-memories")}
    if request.method == "POST":
        if not data_erase.confirmed(request):
            return data_erase.erase_page(request, **page, error=data_erase.not_confirmed_error(), status=400)
        user_data_erase(user_id=user_id, actor=request.user, reason=ERASE_REASON)
        flash.success(request, _("Everything stored about you was erased. It cannot be restored."))
        return redirect("my-memories")
    return data_erase.erase_page(request, **page)
