"""/api/docs/: the dashboard's header above Swagger UI, a way back, and words for who is signed in."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_docs_page_has_a_way_back_to_the_dashboard(client):
    html = client.get("/api/docs/").content.decode()
    assert f'<a id="docs-back" href="{reverse("home")}">' in html
    assert 'id="swagger-ui"' in html  # Swagger UI is still there, below the header
    assert f'{reverse("login")}?next=/api/docs/' in html  # anonymous: how to sign in


def test_docs_header_speaks_the_users_language_and_says_the_reference_is_english(login, alice):
    client = login(alice)
    html = client.get("/api/docs/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "返回控制台" in html and "下面的 API 参考为英文。" in html
    assert reverse("my-memories") in html and "alice" in html
    html = client.get("/api/docs/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Back to the dashboard" in html and "is in English" not in html


def test_docs_header_escapes_the_user_name(client, django_user_model):
    user = django_user_model.objects.create_user(username="<b>x</b>", password="pw")
    client.force_login(user)
    html = client.get("/api/docs/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
