"""Pages for support staff and end users show no internals: no hex id, no namespace, no raw JSON, in
English and in Chinese. Developers (and superusers, who are developers too) keep them; the API keeps them.

Every page of ``test_complete_translation._pages`` that support or an end user sees is rendered in both
languages; the visible text (code and pre blocks included: they are visible too) must hold none of them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.utils import translation

from tests.i18n.test_complete_translation import _pages, world  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

HEX_ID = re.compile(r"(?<![0-9a-zA-Z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{12,}(?![0-9a-zA-Z])")
NAMESPACE = re.compile(r'\[\s*"agent:|"user:|\bagent:[a-z]|\buser:\d')
RAW_JSON = re.compile(r'^\s*[\[{]\s*"|"\s*:\s*[\[{"\d]|\{\s*"[a-z_]+"\s*:')


class ShownText(HTMLParser):
    """Text a person sees, code and pre included; not scripts, styles, the language menu, textareas."""

    HIDDEN = {"script", "style", "textarea", "svg", "option-lang"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and "lang" in (attrs.get("class") or "").split():
            tag = "option-lang"
        if tag not in ("input", "br", "img", "meta", "link", "hr", "col", "source", "wbr"):
            self.stack.append(tag)
        if not any(t in self.HIDDEN for t in self.stack):
            for attr in ("title", "placeholder", "aria-label", "alt"):
                if attrs.get(attr):
                    self.texts.append(attrs[attr])

    def handle_endtag(self, tag):
        if tag == "form" and "option-lang" in self.stack:
            tag = "option-lang"
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if data.strip() and not any(t in self.HIDDEN for t in self.stack):
            self.texts.append(data.strip())


def internals(html: str) -> list[str]:
    parser = ShownText()
    parser.feed(html)
    found = []
    for text in parser.texts:
        for name, pattern in (("hex id", HEX_ID), ("namespace", NAMESPACE), ("JSON", RAW_JSON)):
            if pattern.search(text):
                found.append(f"{name} in {text[:70]!r}")
                break
    return found


def test_the_check_sees_ids_namespaces_and_json():
    html = ('<p>5aa1f48e9c2b</p><code>["agent:chat","user:5"]</code><pre>{"returned": 1}</pre>'
            '<td>bob rides a bike</td><td>2026-12-04 19:31</td><td>conv-1</td><p>user id <code>5</code></p>')
    assert [f.split(" in ")[0] for f in internals(html)] == ["hex id", "namespace", "JSON"]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_support_and_end_user_pages_show_no_internals(request, world, settings, language,  # noqa: F811
                                                      support_user):
    settings.LANGUAGE_CODE = language
    clients: dict[str, Client] = {}
    found = {}
    try:
        for role, url, method, post in _pages(world):
            if role == "developer" or role is None:
                continue
            role = "support_user" if role == "superuser" else role  # superusers are developers too
            client = clients.get(role)
            if client is None:
                client = clients[role] = Client()
                client.force_login(request.getfixturevalue(role))
            response = client.post(url, post, follow=True) if method == "post" else client.get(url)
            if response.status_code in (403, 405):
                continue
            problems = internals(response.content.decode())
            if problems:
                found[f"{role} {method.upper()} {url}"] = sorted(set(problems))
    finally:
        translation.deactivate()
    assert found == {}, "internals shown:\n" + "\n".join(f"{k}: {v}" for k, v in found.items())


# --- Audit reasons, state histories and exports: words, in the page's language -----------------------------

RULE_STRING = re.compile(r"\brules:|\breconcile (?:new|update|same|conflict)\b|superseded by|\bllm:|"
                         r"revert to version|undo delete:|\bmerged [0-9a-f]")


@pytest.fixture
def reasons_world(alice, support_user, make_memory):
    """Alice's items after changes of fact: a replacement decided by the rules, support's archive with a
    note, a revert, an undone delete, a merge, and an entry written before reasons were codes."""
    from importlib import import_module

    from memoryboard.audit import audit_record
    from memoryboard.ltm.store.items import (
        memory_archive, memory_delete_for_user, memory_restore_for_user, record_state_change,
    )
    from memoryboard.ltm.write.edits import memory_revert, memory_update
    from memoryboard.ltm.write.reconcile import memory_save_reconciled
    from memoryboard.ltm.write.staff import memory_merge_selected
    from memoryboard.models import ArchivedReason, AuditLog
    from memoryboard.models.namespaces import build_namespace

    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    old = memory_save_reconciled(namespace=ns, content="I live in Shanghai", memory_type="FACT", agent_id="chat",
                                 source="auto_extract").memory
    memory_save_reconciled(namespace=ns, content="I moved to Berlin", memory_type="FACT", agent_id="chat",
                           source="auto_extract")
    note = make_memory(alice, "Prefers window seats")
    memory_archive(memory=note, actor=support_user, reason=ArchivedReason.STAFF, note="asked in ticket 4411")
    edited = make_memory(alice, "Drinks tea")
    memory_update(memory=edited, actor=alice, content="Drinks green tea")
    memory_revert(memory=edited, actor=support_user, version=1)
    gone = make_memory(alice, "Has a dog")
    memory_delete_for_user(memory=gone, actor=alice)
    memory_restore_for_user(memory=gone, actor=alice)
    memory_merge_selected(memories=[make_memory(alice, "Plays chess"), make_memory(alice, "Plays chess often")],
                          actor=support_user)
    split_reason = import_module("memoryboard.migrations.0022_reason_details_ask_first").split_reason
    code, details = split_reason("superseded by 8b7c0cc9e1f2a3b4: rules: 0fc54db7aa11bb22: residence")
    audit_record(actor=None, action=AuditLog.Action.ARCHIVE, object_type="memory", object_id=old.pk,
                 after={"value_json": old.value_json}, reason=code, details=details)
    record_state_change(old.pk, "active", "superseded", None, code, details)
    return alice


def _english_reason_words() -> set[str]:
    from memoryboard.models import ArchivedReason, MemoryState
    from memoryboard.models.labels import OTHER_REASONS
    from memoryboard.shared.item_words import STATE_TITLES

    with translation.override("en"):
        words = {str(v) for v in OTHER_REASONS.values()} | {str(label) for _c, label in ArchivedReason.choices}
        words |= {str(label) for _c, label in MemoryState.choices} | {str(t) for pair in STATE_TITLES.values()
                                                                      for t in pair}
    return {w for w in words if len(w) > 6}


def _reason_pages(client_for, user):
    from django.urls import reverse

    from memoryboard.models import LongTermMemory

    ids = list(LongTermMemory.objects.filter(namespace__contains=f'"user:{user.pk}"').values_list("pk", flat=True))
    end_user = client_for(user)
    yield "end user", reverse("my-memories"), end_user.get(reverse("my-memories"))
    yield "end user", reverse("my-memories-export-page"), end_user.get(reverse("my-memories-export-page"))
    for pk in ids:
        url = reverse("my-memories-detail", args=[pk])
        yield "end user", url, end_user.get(url)
    support = client_for(None)
    yield "support", reverse("person", args=[user.pk]), support.get(reverse("person", args=[user.pk]))
    for pk in ids:
        url = reverse("person-item-history", args=[user.pk, pk])
        yield "support", url, support.get(url)
        yield "support", url + " (htmx)", support.get(url, HTTP_HX_REQUEST="true")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_audit_reasons_state_histories_and_exports_are_words(reasons_world, support_user, settings, language):
    settings.LANGUAGE_CODE = language
    english = _english_reason_words()

    def client_for(user):
        client = Client()
        client.force_login(user or support_user)
        return client

    found = {}
    try:
        for who, url, response in _reason_pages(client_for, reasons_world):
            assert response.status_code == 200, url
            parser = ShownText()
            parser.feed(response.content.decode())
            problems = []
            for text in parser.texts:
                if HEX_ID.search(text) or RULE_STRING.search(text):
                    problems.append(text[:90])
                if language != "en":
                    problems += [f"English {w!r}" for w in english if w in text]
            if problems:
                found[f"{who} {url}"] = sorted(set(problems))
    finally:
        translation.deactivate()
    assert found == {}, "internals or English shown:\n" + "\n".join(f"{k}: {v}" for k, v in found.items())


def test_the_reasons_check_sees_rule_strings_and_english():
    assert RULE_STRING.search("superseded by 8b7c0cc9…: rules: 0fc54db7…: …")
    assert RULE_STRING.search("reconcile update (rules)") and not RULE_STRING.search("Saved as a new statement")
    assert "Archived by support" in _english_reason_words()
