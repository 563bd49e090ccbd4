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
