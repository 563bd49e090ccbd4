"""One definition of "current" (``ltm.store.states``): not superseded, not past its expiry (even before the
sweep archives it), not waiting for review, not rejected, not archived, not deleted; paused items are kept
but never retrieved. Every read surface uses it: the agent's injection and ``memory_search`` tool, MCP
``memory_search`` and ``memory_list``, ``/v1``, the REST API, My memories and the admin's related items;
``as_of`` shows what was current then and never an item waiting for review or rejected."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from memoryboard.ltm.store.items import memory_set_paused
from memoryboard.ltm.store.states import (
    STORED_STATES,
    current_q,
    is_current,
    memory_state,
    state_q,
)
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryStateChange
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db

TOPIC = "User's favourite city is"


def _expire(memory, *, when=None) -> LongTermMemory:
    """Give ``memory`` an expiry already past (not archived: the sweep has not come by)."""
    when = when or timezone.now() - timedelta(hours=1)
    value = {**memory.value_json, "expiresAt": when.strftime("%Y-%m-%dT%H:%M:%SZ")}
    LongTermMemory.objects.filter(pk=memory.pk).update(value_json=value)
    memory.value_json = value
    return memory


@pytest.fixture
def items(alice, make_memory):
    """One item of alice's in each state, all about the same thing, and an active one."""
    made = {
        "active": make_memory(alice, f"{TOPIC} Berlin"),
        "paused": make_memory(alice, f"{TOPIC} Paris"),
        "expired": _expire(make_memory(alice, f"{TOPIC} Lisbon")),
        "later": make_memory(alice, f"{TOPIC} Vienna"),
    }
    memory_set_paused(memory=made["paused"], actor=alice, paused=True)
    _expire(made["later"], when=timezone.now() + timedelta(days=3))
    for reason, city in [(ArchivedReason.SUPERSEDED, "Rome"), (ArchivedReason.PENDING_REVIEW, "Oslo"),
                         (ArchivedReason.REJECTED, "Cairo"), (ArchivedReason.STAFF, "Lima"),
                         (ArchivedReason.USER_DELETED, "Quito")]:
        made[str(reason)] = make_memory(alice, f"{TOPIC} {city}", archived_reason=reason)
    return made


CURRENT = {"active", "paused", "later"}
RETRIEVED = {"active", "later"}


def _names(items, ids) -> set[str]:
    by_id = {m.pk: name for name, m in items.items()}
    return {by_id[pk] for pk in ids if pk in by_id}


def _contents(items, names) -> set[str]:
    return {items[name].content for name in names}


def test_the_filter_the_predicate_and_the_states_agree(items):
    rows = list(LongTermMemory.objects.all())
    assert {m.pk for m in rows if is_current(m)} == set(LongTermMemory.objects.filter(current_q())
                                                        .values_list("pk", flat=True))
    assert _names(items, LongTermMemory.objects.filter(current_q()).values_list("pk", flat=True)) == CURRENT
    # Each item is in exactly one state, the same by the filter and by the item.
    for memory in rows:
        states = [state for state in STORED_STATES
                  if LongTermMemory.objects.filter(state_q(state), pk=memory.pk).exists()]
        assert states == [memory_state(memory)], (memory.content, states)
    assert memory_state(items["expired"]) == "expired" and not items["expired"].archived


def test_mcp_memory_list_and_search_return_only_current_items(items, alice):
    from memoryboard.mcp_server.tools import identity_for_token, mcp_memory_list, mcp_memory_search
    from rest_framework.authtoken.models import Token

    identity = identity_for_token(key=Token.objects.create(user=alice).key)
    listed = mcp_memory_list(identity=identity, limit=50)
    assert {item["content"] for item in listed["items"]} == _contents(items, CURRENT)
    found = mcp_memory_search(identity=identity, query=f"{TOPIC} Lisbon", k=20)
    assert {item["content"] for item in found["results"]} <= _contents(items, RETRIEVED)
    items["expired"].refresh_from_db()
    assert items["expired"].archived_reason == ArchivedReason.EXPIRED  # the list met it: archived at once


def test_the_agents_memory_search_tool_and_injection_use_only_current_items(items, alice):
    from memoryboard.ltm.search.retrieval import format_memory_block, memory_retrieve
    from memoryboard.ltm.write.tools import run_memory_tool

    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    found = run_memory_tool(name="memory_search", namespace=ns, agent_id="chat",
                            arguments={"query": f"{TOPIC} Lisbon", "k": 20})
    assert {item["content"] for item in found["results"]} == _contents(items, RETRIEVED)
    block = format_memory_block(memory_retrieve(namespace=ns, query=f"{TOPIC} Oslo", k=20, agent_id="chat"))
    assert items["active"].content in block
    for name in set(items) - RETRIEVED:
        assert items[name].content not in block, name


def test_v1_injects_only_current_items(items, alice, openai_settings):
    from rest_framework.authtoken.models import Token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    openai_settings.push_reply(content="Berlin, I believe.")
    response = client.post("/v1/chat/completions", {"model": "chat", "messages": [
        {"role": "user", "content": f"What is my favourite city? {TOPIC} Lisbon or Oslo?"}]}, format="json")
    assert response.status_code == 200, response.content
    system = openai_settings.chat_requests()[0]["messages"][0]["content"]
    assert items["active"].content in system
    for name in set(items) - RETRIEVED:
        assert items[name].content not in system, name


def test_the_api_lists_current_items_as_archived_false_and_says_expired(items, alice):
    client = APIClient()
    client.force_authenticate(alice)
    current = client.get("/api/v1/memories/?archived=false&limit=50").json()["results"]
    assert {item["content"] for item in current} == _contents(items, CURRENT)
    others = client.get("/api/v1/memories/?archived=true&limit=50").json()["results"]
    assert items["expired"].content in {item["content"] for item in others}
    LongTermMemory.objects.filter(pk=items["expired"].pk).update(archived=False, archived_reason=None)
    one = client.get(f"/api/v1/memories/{items['expired'].pk}/").json()
    assert one["state"] == "expired"
    items["expired"].refresh_from_db()
    assert items["expired"].archived_reason == ArchivedReason.EXPIRED  # the read met it: archived at once
    searched = client.get(f"/api/v1/memories/search/?q={TOPIC} Lisbon&k=20").json()
    assert {item["content"] for item in searched} <= _contents(items, RETRIEVED)


def test_my_memories_shows_only_current_items_as_in_use(items, alice, client):
    client.force_login(alice)
    page = client.get(reverse("my-memories"))
    listed = {m.content for group in page.context["groups"] for m in group["items"]}
    assert listed == _contents(items, CURRENT)
    items["expired"].refresh_from_db()
    assert items["expired"].archived_reason == ArchivedReason.EXPIRED


def test_the_admins_related_items_are_current_ones(items, alice, superuser, client):
    client.force_login(superuser)
    page = client.get(reverse("admin:memoryboard_longtermmemory_change", args=[items["active"].pk]))
    related = {hit.memory.pk for hit in page.context["related"]}
    assert related and _names(items, related) <= RETRIEVED - {"active"}


def test_as_of_shows_what_was_current_then_never_pending_or_rejected(alice, make_memory):
    from memoryboard.ltm.search.retrieval import memory_search
    from memoryboard.ltm.store.selectors import own_memories
    from memoryboard.ltm.write.review import memory_review_approve

    def dated(content, *, valid_from, valid_to=None, expires=None, reason=None):
        memory = make_memory(alice, content, archived_reason=reason)
        value = {**memory.value_json, "validFrom": valid_from}
        if valid_to:
            value["validTo"] = valid_to
        if expires:
            value["expiresAt"] = expires
        LongTermMemory.objects.filter(pk=memory.pk).update(value_json=value)
        return memory

    old = dated(f"{TOPIC} Rome", valid_from="2026-01-01T00:00:00Z", valid_to="2026-03-01T00:00:00Z",
                reason=ArchivedReason.SUPERSEDED)
    dated(f"{TOPIC} Oslo", valid_from="2026-01-01T00:00:00Z", reason=ArchivedReason.PENDING_REVIEW)
    dated(f"{TOPIC} Cairo", valid_from="2026-01-01T00:00:00Z", reason=ArchivedReason.REJECTED)
    short = dated(f"{TOPIC} Lisbon", valid_from="2026-01-01T00:00:00Z", expires="2026-01-15T00:00:00Z")
    approved = dated(f"{TOPIC} Vienna", valid_from="2026-01-01T00:00:00Z", reason=ArchivedReason.PENDING_REVIEW)
    memory_review_approve(memories=[approved], actor=alice)  # believed from now on, not before
    assert MemoryStateChange.objects.filter(memory_id=approved.pk, old_state="pending_review").exists()

    def then(day):
        found = memory_search(queryset=own_memories(user_id=str(alice.pk)), query=f"{TOPIC} Oslo", k=20,
                              user_id=str(alice.pk), as_of=timezone.datetime.fromisoformat(f"{day}T00:00:00+00:00"))
        return {hit.memory.pk for hit in found}

    assert then("2026-01-10") == {old.pk, short.pk}
    assert then("2026-02-01") == {old.pk}  # Lisbon had expired; Oslo, Cairo and Vienna were never believed then
    assert approved.pk in then((timezone.now() + timedelta(days=1)).date().isoformat())
    LongTermMemory.objects.filter(pk=short.pk).update(archived=False)
    assert short.pk not in then("2026-02-01")
