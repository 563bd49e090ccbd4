""""My memories": the list page: the user's items by type, search, the switches, what was deleted."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from memoryboard.ltm.search.ranking import MIN_RELEVANCE
from memoryboard.ltm.search.retrieval import memory_search
from memoryboard.ltm.store.selectors import filter_memories
from memoryboard.ltm.store.tasks import current_items
from memoryboard.ltm.store.states import STORED_STATES, state_counts
from memoryboard.ltm.write.review import ask_first_agents
from memoryboard.models import LongTermMemory, MemoryFlag, MemoryState, MemoryType, UserMemorySettings
from memoryboard.roles import platform_user_id
from memoryboard.shared.item_words import state_title
from memoryboard.web.forms import AskFirstForm, MemoryAddForm, MemoryBulkForm, MemorySearchForm, MemorySwitchForm, PauseRulesForm
from memoryboard.web.my_memories.bulk import deleted_batches
from memoryboard.web.my_memories.states import state_sections
from memoryboard.web.my_memories.common import (
    deleted_items,
    item_usage,
    own_items,
    pause_rules_of,
    retention_cutoff,
    with_labels,
)

# Bands of a search hit's relevance (ltm.search.ranking: 0.5 ≈ a close paraphrase, 0.3 ≈ related), in words.
CLOSE_MATCH = 0.5
RELATED_MATCH = 0.3
# Where each state's items are on the page (the summary's links).
STATE_ANCHORS = {
    MemoryState.ACTIVE: "#current", MemoryState.PAUSED: "#current", MemoryState.SUPERSEDED: "#replaced",
    MemoryState.PENDING_REVIEW: "#memory-review-pending", MemoryState.REJECTED: "#rejected",
    MemoryState.EXPIRED: "#expired", MemoryState.ARCHIVED: "#archived", MemoryState.DELETED: "#recently-deleted",
}


def _semantic(queryset, query: str) -> list[tuple[LongTermMemory, float, float | None]]:
    """The ranked search (the one ranking function of long-term memory), best first: each item, its
    score and its relevance (``None`` for an item standing in for one it replaced)."""
    return [(hit.memory, hit.score, hit.relevance)
            for hit in memory_search(queryset=queryset, query=query, k=20)]


def _switch(user_id: str) -> UserMemorySettings:
    return UserMemorySettings.objects.filter(user_id=user_id).first() or UserMemorySettings(user_id=user_id)


def relevance_words(score: float | None, relevance: float | None = None) -> str:
    """A search hit's relevance in words for end users (raw cosine figures mean nothing to them); a hit
    whose relevance is below the minimum relevance (the assistant would not be given it) is "probably
    unrelated": the search lists the best hits whatever they score (docs/retrieval.md § Fusion)."""
    if score is None or relevance is None:
        return ""
    if relevance < MIN_RELEVANCE:
        return _("probably unrelated")
    if relevance >= CLOSE_MATCH:
        return _("close match")
    if relevance >= RELATED_MATCH:
        return _("related")
    return _("loosely related")


@login_required
@require_GET
def memory_list(request):
    """The user's active items grouped by type (search results: one list, best first), the memory
    switch and recently deleted items, with "undo" for a whole bulk delete."""
    form = MemorySearchForm(request.GET or None)
    query = form.cleaned_data["q"].strip() if form.is_valid() else ""
    mode = (form.cleaned_data.get("mode") or "text") if form.is_valid() else "text"
    active = current_items(own_items(request))
    scores: dict[str, float] = {}
    matches: dict[str, float | None] = {}
    if query and mode == "semantic":
        hits = _semantic(active, query)
        items = [memory for memory, _score, _match in hits]
        scores = {memory.pk: score for memory, score, _match in hits}
        matches = {memory.pk: match for memory, _score, match in hits}
    else:
        items = list(filter_memories(active, search=query or None).order_by("-updated_at")[:500])
    ids = [m.pk for m in items]
    paused = set(MemoryFlag.objects.filter(memory_id__in=ids, paused=True).values_list("memory_id", flat=True))
    usage = item_usage(ids)
    user_id = platform_user_id(request.user)
    rules = pause_rules_of(user_id)
    paused_types = {t for a, t in rules if t and not a}
    paused_agents = {a for a, t in rules if a and not t}
    for memory in with_labels(items):
        memory.paused_by_rule = memory.memory_type in paused_types or memory.agent_namespace in paused_agents
        memory.is_paused = memory.pk in paused
        memory.usage = usage.get(memory.pk)
        memory.score = scores.get(memory.pk)
        memory.relevance = relevance_words(memory.score, matches.get(memory.pk))
    groups = []
    if not query:  # search results stay in their ranked order, not regrouped by type
        for value, label in MemoryType.choices:
            group = [m for m in items if m.memory_type == value]
            if group:
                groups.append({"type": value, "label": label, "items": group})
        others = [m for m in items if m.memory_type not in MemoryType.values]
        if others:
            groups.append({"type": "OTHER", "label": _("Other"), "items": others})
    switch = _switch(user_id)
    deleted = list(filter_memories(deleted_items(request), search=query or None).order_by("-archived_at")[:200])
    retention = settings.MEMORYBOARD_DELETED_RETENTION_DAYS
    cutoff = retention_cutoff()
    for memory in with_labels(deleted):
        memory.purge_at = memory.archived_at + timedelta(days=retention)
        memory.can_undo = memory.archived_at >= cutoff
    # The search box filters every section (by words; a search by meaning ranks the current items only).
    sections = state_sections(request, query=query)
    counts = state_counts(own_items(request))
    batches = deleted_batches(user_id=user_id)
    just_deleted = next((b for b in batches if b["id"] == request.GET.get("deleted")), None)
    undo_item = next((m for m in deleted if m.pk == request.GET.get("undo") and m.can_undo), None)
    context = {
        "form": form,
        "query": query,
        "mode": mode,
        "groups": groups,
        "results": items if query else [],
        "total": len(items),
        "deleted": deleted,
        "batches": batches,
        "just_deleted": just_deleted,
        "undo_item": undo_item,
        "memory_off": {"use": switch.use_memories, "save": switch.save_memories},
        "sections": sections,
        "state_summary": [(state, state_title(state, own=True), counts[state], STATE_ANCHORS[state])
                          for state in STORED_STATES if counts[state]],
        "ask_first_form": AskFirstForm(initial={"agents": sorted(ask_first_agents(user_id=user_id))}),
        "retention_days": retention,
        "add_form": MemoryAddForm(),
        "pause_form": PauseRulesForm(initial={"types": sorted(paused_types), "agents": sorted(paused_agents)}),
        "bulk_form": MemoryBulkForm(initial={"q": query}),
        "switch_form": MemorySwitchForm(
            initial={"use_memories": switch.use_memories, "save_memories": switch.save_memories}
        ),
    }
    return render(request, "web/my_memories.html", context)
