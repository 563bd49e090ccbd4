"""CSRF, the Content-Security-Policy, HTTPS settings and login throttling."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from memoryboard.security import security_settings

ROOT = Path(__file__).resolve().parents[2]


# --- CSRF ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_csrf_enforced_on_session_authenticated_api_writes(alice, make_memory):
    memory = make_memory(alice, "keep me")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.get("/api/v1/memories/").status_code == 200  # reads need no token
    for method, url, body in (
        ("delete", f"/api/v1/memories/{memory.pk}/", None),
        ("patch", f"/api/v1/memories/{memory.pk}/", '{"content": "changed"}'),
        ("post", "/api/v1/strategies/context/trim/apply", '{"messages": []}'),
    ):
        response = getattr(client, method)(url, body, content_type="application/json")
        assert response.status_code == 403, (method, url)
        assert "CSRF" in response.json()["error"]["message"]
    memory.refresh_from_db()
    assert memory.content == "keep me" and not memory.archived

    # With the token from the cookie the same write goes through.
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    response = client.patch(
        f"/api/v1/memories/{memory.pk}/", '{"content": "changed"}', content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 200


@pytest.mark.django_db
def test_token_authenticated_writes_need_no_csrf(alice, make_memory):
    from rest_framework.authtoken.models import Token

    memory = make_memory(alice, "token write")
    token = Token.objects.create(user=alice)
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.patch(f"/api/v1/memories/{memory.pk}/", '{"content": "ok"}', content_type="application/json")
    assert response.status_code == 200


@pytest.mark.django_db
def test_csrf_enforced_on_the_login_form(alice):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    assert response.status_code == 403


def test_every_post_form_in_the_templates_carries_a_csrf_token():
    """Plain POST forms need {% csrf_token %}; htmx requests get the token from base.html's hx-headers."""
    missing = []
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"<form\b[^>]*>(.*?)</form>", text, flags=re.S | re.I):
            opening = match.group(0)[: match.group(0).index(">") + 1]
            if re.search(r"method=[\"']?post", opening, re.I) and "csrf_token" not in match.group(0):
                missing.append(f"{path.relative_to(ROOT)}: {opening[:80]}")
    assert not missing, missing
    base = (ROOT / "templates" / "base.html").read_text(encoding="utf-8")
    assert "X-CSRFToken" in base and "{{ csrf_token }}" in base


# --- headers -------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/accounts/login/", "/", "/api/v1/health/"])
def test_csp_allows_only_own_static_files(client, alice, url):
    client.force_login(alice)
    response = client.get(url)
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "http" not in policy
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_security_settings_function():
    prod = security_settings(debug=False, https=True, hsts_seconds=3600)
    assert prod["SESSION_COOKIE_SECURE"] and prod["CSRF_COOKIE_SECURE"] and prod["SECURE_SSL_REDIRECT"]
    assert prod["SECURE_HSTS_SECONDS"] == 3600 and prod["SECURE_HSTS_INCLUDE_SUBDOMAINS"]
    for debug, https in ((True, True), (False, False), (True, False)):
        values = security_settings(debug=debug, https=https)
        assert not values["SESSION_COOKIE_SECURE"] and not values["SECURE_HSTS_SECONDS"]
        assert values["SESSION_COOKIE_HTTPONLY"] and values["X_FRAME_OPTIONS"] == "DENY"


def _settings_in_subprocess(**env) -> str:
    code = ("import memoryboard.settings as s; "
            "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT)")
    full_env = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", code], env=full_env, cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_settings_module_turns_on_https_settings_only_without_debug():
    assert _settings_in_subprocess(MEMORYBOARD_HTTPS="1", MEMORYBOARD_DEBUG="0") == "True True 31536000 True"
    assert _settings_in_subprocess(MEMORYBOARD_HTTPS="1", MEMORYBOARD_DEBUG="1") == "False False 0 False"
    assert _settings_in_subprocess(MEMORYBOARD_HTTPS="0", MEMORYBOARD_DEBUG="0") == "False False 0 False"


@pytest.mark.django_db
def test_hsts_header_and_secure_cookies_when_on(settings, alice):
    for key, value in security_settings(debug=False, https=True).items():
        setattr(settings, key, value)
    client = Client()
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"}, secure=True)
    assert response["Strict-Transport-Security"].startswith("max-age=31536000")
    assert response.cookies["sessionid"]["secure"] and response.cookies["sessionid"]["httponly"]
    assert Client().get("/accounts/login/").status_code == 301  # plain HTTP redirects to HTTPS


# --- login throttling ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_login_form_throttled_after_ten_failures(client, alice):
    for _ in range(10):
        response = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
        assert response.status_code == 200 and "_auth_user_id" not in client.session
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    assert "_auth_user_id" not in client.session
    assert response.status_code == 200 and response.context["form"].errors


@pytest.mark.django_db
def test_login_from_another_address_is_not_throttled(client, alice):
    for _ in range(10):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    other = Client(REMOTE_ADDR="10.0.0.9")
    response = other.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    assert response.status_code == 302


@pytest.mark.django_db
def test_login_throttle_expires(client, alice, monkeypatch):
    from memoryboard.api import throttling

    for _ in range(10):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    throttling.shared_cache().clear()  # what the cache does when the window's timeout passes
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    assert response.status_code == 302
    assert throttling.LOGIN_FAILURE_WINDOW_SECONDS == 60
