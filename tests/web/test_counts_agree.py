"""Every page that counts a person's items, conversations or audit entries says the numbers the database
holds: My memories, the support user page, the erase confirmation, the exports (JSON and readable) and
memory health. Items are counted here straight from their columns, not through the code that counts them."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memoryboard.ltm.store.items import memory_archive, memory_delete_for_user, memory_set_paused
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import ArchivedReason, AuditLog, ChatMessage, ConversationOwner, LongTermMemory, MemoryFlag
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(alice, bob, make_memory):
    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    memory_save_reconciled(namespace=ns, content="I live in Shanghai", memory_type="FACT", agent_id="chat")
    memory_save_reconciled(namespace=ns, content="I moved to Berlin", memory_type="FACT", agent_id="chat")
    make_memory(alice, "likes green tea")
    memory_set_paused(memory=make_memory(alice, "paused one"), actor=alice, paused=True)
    make_memory(alice, "waiting one", archived_reason=ArchivedReason.PENDING_REVIEW)
    make_memory(alice, "rejected one", archived_reason=ArchivedReason.REJECTED)
    memory_archive(memory=make_memory(alice, "staff one"), actor=None, reason=ArchivedReason.STAFF, note="asked")
    memory_delete_for_user(memory=make_memory(alice, "deleted one"), actor=alice)
    expired = make_memory(alice, "expired one")
    value = {**expired.value_json, "expiresAt": (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}
    LongTermMemory.objects.filter(pk=expired.pk).update(value_json=value)
    make_memory(bob, "bob's own")
    for n, text in enumerate(["hello", "hi there"]):
        ChatMessage.objects.create(conversation_id="conv-a", agent_id="chat", user_id=str(alice.pk),
                                   role="USER" if n == 0 else "ASSISTANT", content=text)
    ConversationOwner.objects.create(conversation_id="conv-claimed", user_id=str(alice.pk), agent_id="chat")
    return alice


def expected(user) -> dict[str, int]:
    """The items per state, from the columns."""
    rows = LongTermMemory.objects.filter(namespace__contains=f'"user:{user.pk}"')
    paused = set(MemoryFlag.objects.filter(paused=True).values_list("memory_id", flat=True))
    now = timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    counts = {"active": 0, "paused": 0, "expired": 0}
    for m in rows:
        if not m.archived:
            past = bool(m.value_json.get("expiresAt")) and m.value_json["expiresAt"] <= now
            state = "expired" if past else "paused" if m.pk in paused else "active"
        else:
            state = {"user_deleted": "deleted", None: "archived"}.get(m.archived_reason, m.archived_reason)
            state = "archived" if state in ("staff", "decay", "over_limit", "merged") else state
        counts[state] = counts.get(state, 0) + 1
    return {k: v for k, v in counts.items() if v}


def test_every_page_counts_the_same_items_conversations_and_audit_entries(world, login, support_user):
    alice = world
    want = expected(alice)
    assert want == {"active": 2, "paused": 1, "superseded": 1, "pending_review": 1, "rejected": 1, "archived": 1,
                    "deleted": 1, "expired": 1}
    conversations = 2  # one with messages, one claimed

    # My memories: the summary by state (visiting it archives the expired item it meets: still expired).
    client = login(alice)
    page = client.get(reverse("my-memories")).content.decode()
    summary = re.search(r'<nav class="state-summary.*?</nav>', page, re.S).group(0)
    assert {k: int(v) for k, v in re.findall(r'data-state="(\w+)">[^<]*<span class="count">(\d+)</span>',
                                            summary)} == want
    # Memory health: current is in use (not paused), paused apart, replaced, waiting.
    health = dict(re.findall(r'<td data-health="(\w+)">(?:<a [^>]*>)?(\d+)', page))
    assert {k: int(health[k]) for k in ("current", "paused", "superseded", "pending")} == {
        "current": want["active"], "paused": want["paused"], "superseded": want["superseded"],
        "pending": want["pending_review"]}

    # The readable export and the JSON one.
    readable = client.get(reverse("my-memories-export-page")).content.decode()
    assert f'data-count="memories">{sum(want.values())} memories' in readable
    assert f'data-count="conversations">{conversations} conversations' in readable
    assert len(re.findall(r'<article class="export-conversation">', readable)) == conversations
    exported = json.loads(client.get(reverse("my-memories-export")).content)
    audit = AuditLog.objects.filter(subject_user_id=str(alice.pk)).count()  # the expiry sweep's entry too
    assert {k: v for k, v in exported["summary"]["memories"].items() if v} == want
    assert len(exported["memories"]) == sum(want.values())
    assert exported["summary"]["conversations"] == conversations
    assert exported["summary"]["audit_entries"] == len(exported["audit_log"]) == audit

    # The support user page: the state filter and the conversations.
    support = login(support_user)
    person = support.get(reverse("person", args=[alice.pk])).content.decode()
    options = dict(re.findall(r'<option value="(\w+)"[^>]*>[^<(]*\((\d+)\)</option>', person))
    assert {k: int(v) for k, v in options.items() if int(v)} == want
    assert f"{conversations} conversations" in person
    person_health = dict(re.findall(r'<td data-health="(\w+)">(?:<a [^>]*>)?(\d+)', person))
    assert int(person_health["current"]) == want["active"] and int(person_health["paused"]) == want["paused"]
    exported = json.loads(support.post(reverse("person-export", args=[alice.pk])).content)
    assert exported["summary"]["conversations"] == conversations

    # The erase confirmation, and the trail after the erase says what it promised.
    erase = support.get(reverse("person-erase", args=[alice.pk])).content.decode()
    rows = {key: int(n) for key, n in re.findall(
        r'<tr data-section="(\w+)"><td>.*?</td><td class="num">(\d+)</td>', erase, re.S)}
    assert rows["memories"] == sum(want.values()) and rows["conversations"] == conversations
    audit = AuditLog.objects.filter(subject_user_id=str(alice.pk)).count()  # the export added one
    assert rows["audit_log"] + rows["audit_log_unlinked"] == audit
    support.post(reverse("person-erase", args=[alice.pk]), {"confirm": "yes"})
    after = support.get(reverse("person", args=[alice.pk]))
    trail = re.search(r'<section class="card-plain person-section" id="person-audit">.*?</section>',
                      after.content.decode(), re.S)
    shown = len(re.findall(r"<tr data-object-type=", trail.group(0))) if trail else 0
    assert shown == rows["audit_log"] + 1  # what stays on the trail, and the erase's own entry
