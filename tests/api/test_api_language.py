"""API clients that name no language get English; browsers keep the site's language (Chinese by default)."""

from __future__ import annotations

import re

import pytest
from django.conf import settings as django_settings
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_401 = "Authentication credentials were not provided."


@pytest.fixture(autouse=True)
def _chinese_site(settings):
    settings.LANGUAGE_CODE = "zh-hans"  # the site's real default (tests otherwise run in English)


@pytest.mark.parametrize("path", ["/api/v1/memories/", "/api/v1/me/data/"])
def test_api_client_without_accept_language_gets_english(client, path):
    response = client.get(path)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == ENGLISH_401
    assert response["Content-Language"] == "en"


def test_openai_endpoint_without_accept_language_gets_english(client):
    body = client.get("/v1/models").json()
    assert not CJK.search(str(body)), body


def test_field_errors_are_english_for_api_clients(alice):
    api = APIClient()
    api.force_authenticate(alice)
    body = api.post("/api/v1/me/data/erase/", {}, format="json").json()
    assert body["error"]["fields"]["confirm"] == ["This field is required."]


def test_api_client_asking_for_chinese_gets_chinese(client):
    response = client.get("/api/v1/memories/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    message = response.json()["error"]["message"]
    assert CJK.search(message) and message != ENGLISH_401
    assert response["Content-Language"] == "zh-hans"


def test_the_language_cookie_still_counts_on_the_api(client):
    client.cookies[django_settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    assert CJK.search(client.get("/api/v1/memories/").json()["error"]["message"])


def test_pages_keep_the_site_language():
    html = Client().get("/accounts/login/").content.decode()
    assert '<html lang="zh-hans">' in html  # no Accept-Language on a page: the site's default, as before
    html = Client().get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="en">' in html


def test_the_api_default_is_a_setting(client, settings):
    settings.MEMORYBOARD_API_DEFAULT_LANGUAGE = "zh-hans"
    assert CJK.search(client.get("/api/v1/memories/").json()["error"]["message"])


def test_an_unknown_api_language_fails_the_checks(settings):
    from memoryboard.checks import check_api_language

    assert check_api_language() == []
    settings.MEMORYBOARD_API_DEFAULT_LANGUAGE = "fr"
    assert [e.id for e in check_api_language()] == ["memoryboard.E005"]
