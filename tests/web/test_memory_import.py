"""My memories → Import: preview (dry run) then import; bad rows shown and nothing written; CSRF."""

from __future__ import annotations

import json

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
        assert "<td>1</td><td>type</td>" in html and 'id="confirm-import"' not in html
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
