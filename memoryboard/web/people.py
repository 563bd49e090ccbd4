"""User pages for support staff: find a user by name, e-mail or id; see everything stored about them.

Support staff and developers read these pages; the privacy actions (export for the user, erase all)
need the right to change any item (support, superusers), and both are recorded in the audit log.
"""

from __future__ import annotations

import json

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memoryboard.ltm import user_data
from memoryboard.web import data_erase
from memoryboard.ltm.selectors import own_memories
from memoryboard.models import ArchivedReason, MemoryState, MemoryType
from memoryboard.roles import can_change_any_memory, can_read_all_memories
from memoryboard.users import find_people, person as lookup_person

MAX_RESULTS = 50


def _staff(request) -> None:
    if not can_read_all_memories(request.user):
        raise PermissionDenied


def _changer(request) -> None:
    if not can_change_any_memory(request.user):
        raise PermissionDenied


def admin_items_url(user_id: str, **params: str) -> str:
    return reverse("admin:memoryboard_longtermmemory_changelist") + "?" + urlencode({"user": user_id, **params})


@login_required
@require_GET
def people_search(request):
    """Find people by name, e-mail or id. An id nobody knows is still offered (it may have items)."""
    _staff(request)
    q = (request.GET.get("q") or "").strip()[:200]
    found = find_people(q, limit=MAX_RESULTS) if q else []
    unknown_id = bool(q) and not any(p.user_id == q for p in found) and own_memories(user_id=q).exists()
    return render(request, "web/people.html", {"q": q, "found": found, "unknown_id": unknown_id})


@login_required
@require_GET
def person_detail(request, user_id: str):
    """One user: every agent's items by state and type, agent accesses, audit trail, conversations."""
    _staff(request)
    counts = user_data.memory_counts(user_id=user_id)
    states = [(s, MemoryState(s).label) for s in MemoryState.values if s != MemoryState.PURGED]
    types = [(t, MemoryType(t).label) for t in MemoryType.values]
    rows = [
        {
            "agent": c.agent,
            "total": c.total,
            "url": admin_items_url(user_id, agent=c.agent),
            "states": [(c.states.get(s, 0), admin_items_url(user_id, agent=c.agent, state=s)) for s, _l in states],
            "types": [(c.types.get(t, 0), admin_items_url(user_id, agent=c.agent, type=t)) for t, _l in types],
        }
        for c in counts
    ]
    return render(request, "web/person.html", {
        "person": lookup_person(user_id),
        "rows": rows,
        "states": states,
        "types": types,
        "total": sum(c.total for c in counts),
        "accesses": user_data.recent_accesses(user_id=user_id),
        "audit": user_data.audit_trail(user_id=user_id),
        "conversations": user_data.conversations(user_id=user_id),
        "items_url": admin_items_url(user_id),
        "audit_url": reverse("admin:memoryboard_auditlog_changelist") + "?" + urlencode({"subject_user": user_id}),
        "chat_url": reverse("admin:memoryboard_chatmessage_changelist") + "?" + urlencode({"user": user_id}),
        "can_change": can_change_any_memory(request.user),
        "archived_reasons": dict(ArchivedReason.choices),
    })


@login_required
@require_POST
def person_export(request, user_id: str):
    """Everything stored about the user as JSON, for a privacy request (audited: a POST, not a link)."""
    _changer(request)
    payload = user_data.memory_export_for_user(user_id=user_id, actor=request.user)
    response = HttpResponse(json.dumps(payload, ensure_ascii=False, indent=2),
                            content_type="application/json; charset=utf-8")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in user_id)[:60]
    response["Content-Disposition"] = f'attachment; filename="memories-user-{safe}.json"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def person_erase(request, user_id: str):
    """Erase everything stored about a user (a privacy request): the confirmation page lists it by kind;
    the confirmed POST is ``user_data.user_data_erase``, one transaction, no undo, audited without content."""
    _changer(request)
    person = lookup_person(user_id)
    page = {"user_id": user_id, "own": False, "person": person,
            "post_url": reverse("person-erase", args=[user_id]), "cancel_url": reverse("person", args=[user_id])}
    if request.method == "POST":
        if not data_erase.confirmed(request):
            return data_erase.erase_page(request, **page, error=data_erase.not_confirmed_error(), status=400)
        user_data.user_data_erase(user_id=user_id, actor=request.user, reason="privacy request")
        flash.success(request, _("Everything stored about %(name)s was erased.") % {"name": person.label})
        return redirect("person", user_id=user_id)
    return data_erase.erase_page(request, **page)
