"""My memories → Import: preview (dry run) then import; bad rows shown and nothing written; CSRF."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db

URL = "/me/memories/import/"


def test_upload_preview_then_import(login, alice):
    client = login(alice)
    page = client.get("/me/memories/")
    assert URL in page.content.decode()
    items = [{"content": "Likes <b>jazz</b>", "type": "PREFERENCE"}, {"content": "Works at ACME"}]
    upload = SimpleUploadedFile("mine.json", json.dumps(items).encode(), content_type="application/json")
    preview = client.post(URL, {"file": upload, "mode": "skip", "agent": "chat", "step": "preview"})
    assert preview.status_code == 200
    html = preview.content.decode()
    assert 'id="import-summary"' in html and "2 new items" in html and 'id="confirm-import"' in html
    assert "Likes &lt;b&gt;jazz&lt;/b&gt;" in html  # the data carried to the next step is escaped
    assert 'id="import-form"' not in html  # one way on: Import or Cancel
    assert not LongTermMemory.objects.exists()
    applied = client.post(URL, {"text": json.dumps(items), "mode": "skip", "agent": "chat", "step": "apply"})
    assert applied.status_code == 302 and applied["Location"] == "/me/memories/"
    assert sorted(m.content for m in LongTermMemory.objects.all()) == ["Likes <b>jazz</b>", "Works at ACME"]


def test_bad_rows_are_listed_and_nothing_is_imported(login, alice):
    client = login(alice)
    text = json.dumps([{"content": "ok"}, {"content": "x", "type": "OPINION"}])
    for step in ("preview", "apply"):
        response = client.post(URL, {"text": text, "mode": "skip", "agent": "chat", "step": step})
        html = response.content.decode()
        assert "<td>2</td><td>Type</td><td>Unknown type; use one of" in html  # numbered from 1, in words
        assert 'id="confirm-import"' not in html
    assert not LongTermMemory.objects.exists()
    broken = client.post(URL, {"text": "[{", "mode": "skip", "agent": "chat", "step": "preview"})
    assert broken.status_code == 400 and "Not valid JSON" in broken.content.decode()


def test_csrf_is_required(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(URL, {"text": '[{"content": "x"}]', "mode": "skip", "agent": "chat", "step": "apply"})
    assert response.status_code == 403 and not LongTermMemory.objects.exists()


def test_anonymous_is_sent_to_login(client):
    assert client.get(URL).status_code == 302


def test_the_preview_lists_each_item_and_what_happens_to_it(login, alice, make_memory):
    make_memory(alice, "Works at ACME")
    client = login(alice)
    items = [{"content": "Likes <b>jazz</b>", "type": "PREFERENCE"}, {"content": "works at acme"},
             {"content": "Likes <b>jazz</b>", "type": "PREFERENCE"}]
    for mode, duplicate_label in (("skip", "already there: skipped"), ("overwrite", "already there: overwritten")):
        html = client.post(URL, {"text": json.dumps(items), "mode": mode, "agent": "chat",
                                 "step": "preview"}).content.decode()
        rows = re.findall(r'<tr data-index="(\d)"[^>]*>\s*<td>\d</td><td>([^<]*)</td><td>[^<]*Chat assistant</td>'
                          r'<td class="import-content">(.*?)</td>\s*<td>([^<]*)</td>', html)
        assert rows == [("0", "Preference", "Likes &lt;b&gt;jazz&lt;/b&gt;", "new"),
                        ("1", "Fact", "works at acme", duplicate_label),
                        ("2", "Preference", "Likes &lt;b&gt;jazz&lt;/b&gt;", duplicate_label)]
    assert LongTermMemory.objects.count() == 1


def test_a_long_file_lists_its_first_rows_and_counts_the_rest(login, alice):
    from memoryboard.web import memory_import

    client = login(alice)
    items = [{"content": f"Fact number {i}"} for i in range(memory_import.PREVIEW_ROWS + 7)]
    html = client.post(URL, {"text": json.dumps(items), "mode": "skip", "agent": "chat",
                             "step": "preview"}).content.decode()
    assert html.count("<tr data-index=") == memory_import.PREVIEW_ROWS
    assert f"{memory_import.PREVIEW_ROWS + 7} new items" in html and "…and 7 more items." in html


def test_the_preview_speaks_chinese(login, alice, make_memory):
    make_memory(alice, "Works at ACME")
    client = login(alice)
    items = [{"content": "喜欢爵士乐", "type": "PREFERENCE"}, {"content": "Works at ACME"}]
    html = client.post(URL, {"text": json.dumps(items), "mode": "skip", "agent": "chat", "step": "preview"},
                       HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "处理方式" in html and "<td>新增</td>" in html and "<td>已存在：跳过</td>" in html
    assert "What happens" not in html and "already there" not in html


def test_preview_names_the_item_the_import_replaces(login, alice, make_memory):
    make_memory(alice, "I moved to Hamburg")
    client = login(alice)
    text = json.dumps([{"content": "I live in Vienna", "agent": "chat"}])
    html = client.post(URL, {"text": text, "mode": "skip", "agent": "chat", "step": "preview"}).content.decode()
    assert 'new, replaces <q class="replaced">I moved to Hamburg</q>' in html
    assert "<del>I moved to Hamburg</del> → I live in Vienna" in html
    assert LongTermMemory.objects.get().content == "I moved to Hamburg"  # the preview wrote nothing
    client.post(URL, {"text": text, "mode": "skip", "agent": "chat", "step": "apply"})
    assert LongTermMemory.objects.get(value_json__content="I moved to Hamburg").archived_reason == "superseded"
