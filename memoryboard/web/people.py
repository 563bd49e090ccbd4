"""User pages for support staff: find a user by name, e-mail or id; see everything stored about them.

Support staff and developers read these pages; the privacy actions (export for the user, erase all)
need the right to change any item (support, superusers), and both are recorded in the audit log.
"""

from __future__ import annotations

import json

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Sum
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memoryboard.agents_config import agent_labels, get_agents_config
from memoryboard.ltm.people import user_data
from memoryboard.ltm.store.selectors import own_memories
from memoryboard.ltm.store.states import STORED_STATES
from memoryboard.ltm.write.review import ask_first_agents
from memoryboard.models import ChatMessage, ConversationOwner, MemoryState, MemoryType
from memoryboard.roles import can_change_any_memory, can_read_all_memories
from memoryboard.shared.item_words import describe, state_title
from memoryboard.task_recovery import failed_extractions
from memoryboard.users import find_people, person as lookup_person
from memoryboard.web import data_erase, person_items

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


def person_known(user_id: str, person=None) -> bool:
    """Whether the id is someone: in the user directory, or with anything stored about them."""
    person = person or lookup_person(user_id)
    return (person.known or own_memories(user_id=user_id).exists()
            or ChatMessage.objects.filter(user_id=user_id).exists()
            or ConversationOwner.objects.filter(user_id=user_id).exists())


def _person_or_404(user_id: str):
    person = lookup_person(user_id)
    if not person_known(user_id, person):
        raise Http404(_("No such user."))
    return person


@login_required
@require_GET
def person_detail(request, user_id: str):
    """One user: every item (filtered by agent and state) with its actions, agent accesses, audit trail,
    conversations. The page is built of include partials (templates/web/person/), one per section."""
    _staff(request)
    person = _person_or_404(user_id)
    agent = (request.GET.get("agent") or "").strip()[:100]
    state = (request.GET.get("state") or "").strip()
    if state not in STORED_STATES:
        state = ""
    counts = person_items.person_item_counts(user_id=user_id)
    labels = agent_labels()
    agents = sorted({a for a, _s in counts}, key=lambda a: str(labels.get(a, a)))
    if agent not in agents:
        agent = ""
    page = Paginator(person_items.person_items(user_id=user_id, agent=agent, state=state),
                     person_items.PAGE_SIZE).get_page(request.GET.get("page"))
    items = describe(list(page.object_list), user_id=user_id)
    shown_states = [s for s in STORED_STATES
                    if s in (MemoryState.ACTIVE, MemoryState.PAUSED, MemoryState.ARCHIVED, MemoryState.DELETED)
                    or any(st == s for _a, st in counts)]

    def filter_url(**params) -> str:
        query = {k: v for k, v in {"agent": agent, "state": state, **params}.items() if v}
        return reverse("person", args=[user_id]) + ("?" + urlencode(query) if query else "") + "#person-items"

    rows = [
        {
            "agent": a, "label": labels.get(a, a), "url": filter_url(agent=a, state=""),
            "total": sum(n for (ag, _s), n in counts.items() if ag == a),
            "states": [(counts.get((a, s), 0), filter_url(agent=a, state=s)) for s in shown_states],
        }
        for a in agents
    ]
    total = sum(counts.values())
    listed = user_data.conversations(user_id=user_id)
    openings = user_data.conversation_openings([c.conversation_id for c in listed])
    conversations = [(c, labels.get(c.agent_id, c.agent_id), openings.get(c.conversation_id, "")) for c in listed]
    accesses = user_data.recent_accesses(user_id=user_id)
    texts = dict((pk, value.get("content", "") if isinstance(value, dict) else "") for pk, value in
                 own_memories(user_id=user_id).filter(pk__in={a.memory_id for a in accesses})
                 .values_list("pk", "value_json"))
    for a in accesses:
        a.agent_label = labels.get(a.agent_id, a.agent_id)
        a.item_text = texts.get(a.memory_id, "")
    audit = user_data.audit_trail(user_id=user_id)
    agent_config_labels = {agent_id: cfg.label for agent_id, cfg in get_agents_config().agents.items()}
    return render(request, "web/person.html", {
        "person": person,
        "rows": rows,
        "states": [(s, state_title(s), filter_url(agent="", state=s),
                    sum(n for (_a, st), n in counts.items() if st == s)) for s in shown_states],
        "total": total,
        "agent": agent,
        "agent_label": labels.get(agent, agent),
        "state": state,
        "state_label": state_title(state) if state else "",
        "all_url": filter_url(agent="", state=""),
        "items": items,
        "page": page,
        "filter_query": urlencode({k: v for k, v in {"agent": agent, "state": state}.items() if v}) + "&"
        if agent or state else "",
        "person_id": user_id,
        "memory_types": MemoryType.choices,
        "uses": own_memories(user_id=user_id).aggregate(n=Sum("access_count"))["n"] or 0,
        "accesses": accesses,
        "audit": audit,
        "conversations": conversations,
        "messages_total": sum(c.messages for c, *_rest in conversations),
        "conversations_total": len(user_data.conversation_ids(user_id=user_id)),
        "failed_extractions": failed_extractions(user_id=user_id),
        "items_url": admin_items_url(user_id),
        "audit_url": reverse("admin:memoryboard_auditlog_changelist") + "?" + urlencode({"subject_user": user_id}),
        "chat_url": reverse("admin:memoryboard_chatmessage_changelist") + "?" + urlencode({"user": user_id}),
        "can_change": can_change_any_memory(request.user),
        "ask_first": sorted(str(agent_config_labels.get(a, a)) for a in ask_first_agents(user_id=user_id)),
    })


@login_required
@require_POST
def person_export(request, user_id: str):
    """Everything stored about the user as JSON, for a privacy request (audited: a POST, not a link)."""
    _changer(request)
    _person_or_404(user_id)
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
    person = _person_or_404(user_id)
    page = {"user_id": user_id, "own": False, "person": person,
            "post_url": reverse("person-erase", args=[user_id]), "cancel_url": reverse("person", args=[user_id])}
    if request.method == "POST":
        if not data_erase.confirmed(request):
            return data_erase.erase_page(request, **page, error=data_erase.not_confirmed_error(), status=400)
        user_data.user_data_erase(user_id=user_id, actor=request.user, reason="privacy request")
        flash.success(request, _("Everything stored about %(name)s was erased.") % {"name": person.label})
        if not person_known(user_id):  # an id only their data made known: nothing left to show
            return redirect("people")
        return redirect("person", user_id=user_id)
    return data_erase.erase_page(request, **page)
