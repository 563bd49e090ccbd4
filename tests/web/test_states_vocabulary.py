"""One vocabulary of states on the pages a person reads: each state in its own section, counted once; the
user's undo of a wrong replacement; "ask me first" taking effect where agents write; support's revert on
the user page (htmx and plain form) and approve/reject of waiting items."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from memoryboard.agents_config import reset_agents_config
from memoryboard.ltm.store.items import memory_archive
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import ArchivedReason, AskFirst, AuditLog, LongTermMemory, MemoryStateChange
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}

AGENTS = """
agent:
  agents:
    chat: {name: Chat helper, memory-tools: true, long-term-memory: {enabled: true, namespace: chat}}
"""


@pytest.fixture(autouse=True)
def agents(settings, tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS)
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield
    reset_agents_config()


def save(user, content, **extra):
    return memory_save_reconciled(namespace=build_namespace(agent_namespace="chat", user_id=str(user.pk)),
                                  content=content, memory_type="FACT", agent_id="chat", **extra)


def section(page: str, anchor: str) -> str:
    found = re.search(rf'<section class="mem-state[^"]*" id="{anchor}".*?</section>', page, re.S)
    assert found, anchor
    return found.group(0)


def replaced_pair(user):
    old = save(user, "I live in Shanghai").memory
    new = save(user, "I moved to Berlin").memory
    old.refresh_from_db()
    assert old.archived_reason == ArchivedReason.SUPERSEDED
    return old, new


def test_my_memories_puts_each_state_in_its_own_section_counted_once(login, alice, make_memory):
    old, new = replaced_pair(alice)
    staff = make_memory(alice, "archived on request")
    memory_archive(memory=staff, actor=None, reason=ArchivedReason.STAFF, note="asked by phone")
    pending = make_memory(alice, "waits for me", archived_reason=ArchivedReason.PENDING_REVIEW)
    rejected = make_memory(alice, "I said no", archived_reason=ArchivedReason.REJECTED)
    page = login(alice).get(reverse("my-memories")).content.decode()

    replaced = section(page, "replaced")
    assert "I live in Shanghai" in replaced and "I moved to Berlin" in replaced  # with the newer statement
    assert 'data-action="undo-replacement"' in replaced
    archived = section(page, "archived")
    assert "archived on request" in archived and "asked by phone" in archived and "Archived by support" in archived
    assert "waits for me" not in archived and "I live in Shanghai" not in archived and "I said no" not in archived
    assert "I said no" in section(page, "rejected")
    # Waiting items are in the review block only: once on the page.
    assert page.count(f'data-id="{pending.pk}"') == 1
    summary = re.search(r'<nav class="state-summary.*?</nav>', page, re.S).group(0)
    counts = dict(re.findall(r'data-state="(\w+)">[^<]*<span class="count">(\d+)</span>', summary))
    assert counts == {"active": "1", "superseded": "1", "pending_review": "1", "rejected": "1", "archived": "1"}
    assert rejected.pk and new.pk


def test_the_user_undoes_a_wrong_replacement(login, alice):
    old, new = replaced_pair(alice)
    client = login(alice)
    response = client.post(reverse("my-memories-undo-replacement", args=[old.pk]))
    assert response.status_code == 302
    old.refresh_from_db()
    new.refresh_from_db()
    assert not old.archived and old.superseded_by is None and old.valid_to is None
    assert new.archived and new.archived_reason == ArchivedReason.REJECTED
    change = MemoryStateChange.objects.filter(memory_id=new.pk).latest("id")
    assert (change.old_state, change.new_state, change.actor) == ("active", "rejected", alice)
    page = client.get(reverse("my-memories")).content.decode()
    assert "You rejected it on" in section(page, "rejected")
    # Twice, or on an item not replaced: a message, nothing changes.
    again = client.post(reverse("my-memories-undo-replacement", args=[old.pk]))
    assert again.status_code == 302
    new.refresh_from_db()
    assert new.archived_reason == ArchivedReason.REJECTED


def test_no_one_undoes_anothers_replacement(login, alice, bob):
    old, _new = replaced_pair(alice)
    assert login(bob).post(reverse("my-memories-undo-replacement", args=[old.pk])).status_code == 404
    old.refresh_from_db()
    assert old.archived_reason == ArchivedReason.SUPERSEDED


def test_ask_me_first_makes_what_the_agent_notes_wait(login, alice, openai_settings, support_user):
    from memoryboard.ltm.write.extraction import memory_extract_and_save

    client = login(alice)
    page = client.get(reverse("my-memories")).content.decode()
    assert 'id="ask-first"' in page and "Chat helper" in page
    assert client.post(reverse("my-memories-ask-first"), {"agents": ["chat"]}).status_code == 302
    assert AskFirst.objects.get(user_id=str(alice.pk), agent_id="chat").ask_first
    assert AuditLog.objects.filter(object_type="user", object_id=str(alice.pk), reason="ask first").exists()

    openai_settings.push_reply(content=json.dumps([{"type": "FACT", "content": "User is a data engineer"}]))
    saved = memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c1",
                                    conversation=[{"role": "user", "content": "I'm a data engineer at a bank."}])
    assert [m.archived_reason for m in saved] == [ArchivedReason.PENDING_REVIEW]
    page = client.get(reverse("my-memories")).content.decode()
    assert "User is a data engineer" in page and 'data-action="approve"' in page

    support = login(support_user)
    person = support.get(reverse("person", args=[alice.pk])).content.decode()
    assert "Ask first: on for Chat helper" in person
    # Waiting: approve or reject, not "Restore".
    row = re.search(rf'<li class="desk-item[^"]*" id="item-{saved[0].pk}".*?</li>', person, re.S).group(0)
    assert 'data-action="approve"' in row and 'data-action="reject"' in row and 'data-action="restore"' not in row

    client = login(alice)
    client.post(reverse("my-memories-ask-first"), {})
    openai_settings.push_reply(content=json.dumps([{"type": "FACT", "content": "User owns a cat"}]))
    saved = memory_extract_and_save(agent_id="chat", user_id=str(alice.pk), conversation_id="c2",
                                    conversation=[{"role": "user", "content": "I own a cat."}])
    assert [m.archived for m in saved] == [False]


def test_support_reverts_on_the_user_page_in_place_and_without_javascript(login, alice, support_user):
    memory = save(alice, "bob rides a bike").memory
    memory_update(memory=memory, actor=None, content="bob rides a red bike")
    client = login(support_user)
    base = [alice.pk, memory.pk]
    fragment = client.get(reverse("person-item-history", args=base), **HTMX).content.decode()
    assert not fragment.lstrip().startswith("<!DOCTYPE") and 'data-action="revert"' in fragment

    response = client.post(reverse("person-item-revert", args=base), {"version": "1"}, **HTMX)
    body = response.content.decode()
    assert response.status_code == 200 and "Reverted to version 1" in body and "desk-history-content" in body
    memory.refresh_from_db()
    assert memory.content == "bob rides a bike"
    entry = AuditLog.objects.filter(object_id=memory.pk, action="update").latest("id")
    assert (entry.reason, entry.details, entry.actor) == ("revert", {"version": 1}, support_user)

    # Without JavaScript: the history is a whole styled page, the revert a plain form and a redirect to it.
    page = client.get(reverse("person-item-history", args=base))
    assert page.content.decode().lstrip().startswith("<!DOCTYPE") and "app.css" in page.content.decode()
    plain = client.post(reverse("person-item-revert", args=base), {"version": "2"})
    assert plain.status_code == 302 and plain["Location"] == reverse("person-item-history", args=base)
    memory.refresh_from_db()
    assert memory.content == "bob rides a red bike"
    bad = client.post(reverse("person-item-revert", args=base), {"version": "x"})
    assert bad.status_code == 400 and "version" in bad.content.decode()


def test_only_support_reverts_and_only_the_persons_own_item(login, alice, bob, developer, support_user):
    memory = save(alice, "alice drives").memory
    memory_update(memory=memory, actor=None, content="alice drives a van")
    assert login(developer).post(reverse("person-item-revert", args=[alice.pk, memory.pk]),
                                 {"version": "1"}).status_code == 403
    assert login(support_user).post(reverse("person-item-revert", args=[bob.pk, memory.pk]),
                                    {"version": "1"}).status_code == 404
    assert LongTermMemory.objects.get(pk=memory.pk).content == "alice drives a van"


def test_support_undoes_a_replacement_on_the_user_page(login, alice, support_user):
    old, new = replaced_pair(alice)
    client = login(support_user)
    page = client.get(reverse("person", args=[alice.pk])).content.decode()
    row = re.search(rf'<li class="desk-item[^"]*" id="item-{old.pk}".*?</li>', page, re.S).group(0)
    assert "Replaced by a newer statement" in row and "I moved to Berlin" in row
    assert 'data-action="undo-replacement"' in row
    client.post(reverse("person-item-restore", args=[alice.pk, old.pk]), **HTMX)
    old.refresh_from_db()
    new.refresh_from_db()
    assert not old.archived and new.archived_reason == ArchivedReason.REJECTED


def test_what_support_typed_and_what_the_user_said_are_escaped(login, alice, make_memory):
    staff = make_memory(alice, "<b>bold</b> claim")
    memory_archive(memory=staff, actor=None, reason=ArchivedReason.STAFF, note="<script>alert(1)</script>")
    client = login(alice)
    for url in (reverse("my-memories"), reverse("my-memories-export-page"),
                reverse("my-memories-detail", args=[staff.pk])):
        page = client.get(url).content.decode()
        assert "<script>alert(1)</script>" not in page and "<b>bold</b>" not in page, url
        assert "&lt;b&gt;bold&lt;/b&gt; claim" in page, url


def test_a_waiting_item_is_approved_from_its_own_page(login, alice, make_memory):
    pending = make_memory(alice, "waits for me", archived_reason=ArchivedReason.PENDING_REVIEW)
    client = login(alice)
    page = client.get(reverse("my-memories-detail", args=[pending.pk])).content.decode()
    assert "asks for your approval" in page and 'data-action="approve"' in page
    client.post(reverse("my-memories-review"), {"one": f"approve:{pending.pk}"})
    assert not LongTermMemory.objects.get(pk=pending.pk).archived
