"""The admin is memoryboard's: its name, the dashboard's links and the language switch on every page."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url_name", ["admin:index", "admin:memoryboard_longtermmemory_changelist",
                                      "admin:memoryboard_auditlog_changelist"])
def test_admin_pages_are_titled_memoryboard_with_links_and_language_switch(login, support_user, url_name):
    html = login(support_user).get(reverse(url_name)).content.decode()
    assert "Django administration" not in html and "Django site admin" not in html
    assert re.search(r"<title>[^<]*\| memoryboard</title>", html)
    assert '<div id="site-name"><a href="/admin/">memoryboard</a>' in html
    nav = re.search(r'<nav class="mb-admin-nav".*?</nav>', html, re.S).group(0)
    for href in ("/", "/support/users/", "/playground/", "/me/memories/"):
        assert f'href="{href}"' in nav
    assert '<form class="lang" action="/i18n/setlang/" method="post">' in nav
    assert 'name="csrfmiddlewaretoken"' in nav and 'value="zh-hans"' in nav


def test_the_language_switch_of_the_admin_switches(support_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(support_user)
    url = reverse("admin:memoryboard_longtermmemory_changelist")
    html = client.get(url).content.decode()
    token = re.search(r'<form class="lang".*?name="csrfmiddlewaretoken" value="([^"]+)"', html, re.S).group(1)
    response = client.post("/i18n/setlang/", {"csrfmiddlewaretoken": token, "language": "zh-hans", "next": url})
    assert response.status_code == 302 and response["Location"] == url
    assert "长期记忆" in client.get(url).content.decode()


def test_no_model_sidebar_takes_the_lists_width(login, support_user):
    html = login(support_user).get(reverse("admin:memoryboard_longtermmemory_changelist")).content.decode()
    assert 'id="nav-sidebar"' not in html
