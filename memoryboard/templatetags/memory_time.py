"""The blocks of "memories that stay true", each one line in a page:

- ``{% memory_health user_id staff=True %}``: per agent current, superseded, waiting, conflicts,
  duplicates, expiring soon, each a link to its list (``web/_memory_health.html``);
- ``{% memory_review user_id staff=True %}``: the review queue: items waiting, conflict pairs,
  suggested merges, items expiring soon, with their buttons (``web/_memory_review.html``);
- ``{% memory_timeline memory staff=True %}``: the item's versions (revert) and what replaced what
  (``web/_memory_timeline.html``).

``staff``: the support pages (links into the admin, actions as support); otherwise the signed-in
user's own "My memories".
"""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.http import urlencode

from memoryboard.ltm.store.expiry import expiring_soon
from memoryboard.ltm.store.items import end_user_may_edit
from memoryboard.ltm.store.selectors import own_memories
from memoryboard.ltm.store.versions import memory_history
from memoryboard.ltm.write.conflicts import conflict_why
from memoryboard.ltm.write.duplicates import duplicate_suggestions
from memoryboard.ltm.write.health import EXPIRING_SOON_DAYS, memory_health as health
from memoryboard.ltm.write.review import conflict_pairs, pending_review
from memoryboard.models import ArchivedReason, LongTermMemory
from memoryboard.roles import can_change_any_memory, platform_user_id
from memoryboard.agents_config import agent_labels

register = template.Library()
CHAIN_MAX = 20


def _admin_items(user_id: str, **params) -> str:
    return reverse("admin:memoryboard_longtermmemory_changelist") + "?" + urlencode({"user": user_id, **params})


def _item_url(memory_id: str, staff: bool) -> str:
    if staff:
        return reverse("admin:memoryboard_longtermmemory_change", args=[memory_id])
    return reverse("my-memories-detail", args=[memory_id])


def _cached(context, key, compute):
    """One computation per request (the health and review blocks read the same pairs)."""
    request = context.get("request")
    store = getattr(request, "_memory_time", None)
    if store is None:
        store = {}
        if request is not None:
            request._memory_time = store
    if key not in store:
        store[key] = compute()
    return store[key]


def _user_id(context, user_id):
    if user_id:
        return str(user_id)

    return platform_user_id(context["request"].user)


@register.inclusion_tag("web/_memory_health.html", takes_context=True)
def memory_health(context, user_id=None, staff=False):
    uid = _user_id(context, user_id)
    review_anchor = "#memory-review"
    rows = []

    scope = own_memories(user_id=uid)
    conflicts = _cached(context, ("conflicts", uid), lambda: conflict_pairs(scope))
    duplicates = _cached(context, ("duplicates", uid), lambda: duplicate_suggestions(scope))

    labels = agent_labels()  # agents by their name in the page's language, never by id
    for h in health(scope, conflicts=conflicts, duplicates=duplicates):
        current = _admin_items(uid, agent=h.agent, state="active") if staff else reverse("my-memories")
        superseded = _admin_items(uid, agent=h.agent, state="superseded") if staff else reverse("my-memories") + "#replaced"
        paused = _admin_items(uid, agent=h.agent, state="paused") if staff else reverse("my-memories") + "#current"
        rows.append({
            "agent": h.agent,
            "agent_label": labels.get(h.agent, h.agent),
            "cells": [
                ("current", h.current, current),
                ("paused", h.paused, paused),
                ("superseded", h.superseded, superseded),
                ("pending", h.pending, review_anchor + "-pending"),
                ("conflicts", h.conflicts, review_anchor + "-conflicts"),
                ("duplicates", h.duplicates, review_anchor + "-duplicates"),
                ("expiring", h.expiring, review_anchor + "-expiring"),
            ],
        })
    return {"health_rows": rows, "staff": staff}


@register.inclusion_tag("web/_memory_review.html", takes_context=True)
def memory_review(context, user_id=None, staff=False):
    request = context["request"]
    uid = _user_id(context, user_id)
    scope = own_memories(user_id=uid)
    pending = list(pending_review(scope).order_by("-created_at")[:200])
    conflicts = _cached(context, ("conflicts", uid), lambda: conflict_pairs(scope))
    duplicates = _cached(context, ("duplicates", uid), lambda: duplicate_suggestions(scope))
    expiring = sorted(expiring_soon(scope, days=EXPIRING_SOON_DAYS)[:100], key=lambda m: m.expires_at)
    for memory in pending + expiring + [m for p in conflicts for m in (p.new, p.old)] + \
            [m for p in duplicates for m in (p.keep, p.other)]:
        memory.url = _item_url(memory.pk, staff)
    can_change = can_change_any_memory(request.user) if staff else True
    post_url = reverse("person-review", args=[uid]) if staff else reverse("my-memories-review")
    # Each conflict says why (the attribute in words) and links to its page: every way to settle it,
    # with what each keeps and loses.
    conflicts = [{"new": p.new, "old": p.old, "why": conflict_why(new=p.new, old=p.old).sentence,
                  "settle_url": reverse("person-conflict", args=[uid, p.new.pk, p.old.pk]) if staff
                  else reverse("my-memories-conflict", args=[p.new.pk, p.old.pk])} for p in conflicts]
    return {
        "pending": pending, "conflicts": conflicts, "duplicates": duplicates, "expiring": expiring,
        "can_change": can_change, "post_url": post_url, "staff": staff, "csrf_token": context.get("csrf_token"),
        "days": EXPIRING_SOON_DAYS,
    }


def supersede_chain(memory: LongTermMemory, scope) -> list[LongTermMemory]:
    """The items that replaced one another up to and from ``memory``, oldest first (``supersededBy``)."""
    chain = [memory]
    seen = {memory.pk}
    current = memory
    for _step in range(CHAIN_MAX):  # back: the item this one replaced
        previous = scope.filter(value_json__supersededBy=current.pk).order_by("-created_at").first()
        if previous is None or previous.pk in seen:
            break
        chain.insert(0, previous)
        seen.add(previous.pk)
        current = previous
    current = memory
    for _step in range(CHAIN_MAX):  # forward: what replaced it
        following = scope.filter(pk=current.superseded_by).first() if current.superseded_by else None
        if following is None or following.pk in seen:
            break
        chain.append(following)
        seen.add(following.pk)
        current = following
    return chain


@register.inclusion_tag("web/_memory_timeline.html", takes_context=True)
def memory_timeline(context, memory, staff=False):
    request = context["request"]
    scope = own_memories(user_id=memory.user_id) if memory.user_id else LongTermMemory.objects.filter(pk=memory.pk)
    chain = supersede_chain(memory, scope) if memory.user_id else [memory]
    for item in chain:
        item.url = _item_url(item.pk, staff)
        item.is_this = item.pk == memory.pk
        item.is_current = not item.archived
    versions = memory_history(memory=memory)
    rows = [{"v": v, "why": v.reason_words} for v in versions]
    if staff:
        may_revert = can_change_any_memory(request.user)
        revert_url = reverse("support-memory-revert", args=[memory.pk])
    else:
        may_revert = end_user_may_edit(memory)
        revert_url = reverse("my-memories-revert", args=[memory.pk])
    merged_into = None
    if memory.merged_into and memory.archived_reason == ArchivedReason.MERGED:
        target = scope.filter(pk=memory.merged_into).first()
        if target is not None:
            merged_into = {"url": _item_url(target.pk, staff), "content": target.content}
    return {
        "memory": memory, "chain": chain if len(chain) > 1 else [], "version_rows": rows, "may_revert": may_revert,
        "revert_url": revert_url, "latest": versions[-1].version if versions else 1, "staff": staff,
        "csrf_token": context.get("csrf_token"), "merged_into": merged_into,
    }
