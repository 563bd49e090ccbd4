"""Safe by configuration: no start without a secret key when debug is off; the demo never shows
Django's technical pages and any debug page masks DATABASE_URL and keys; unknown /v1/ paths list no
URL patterns; playground trace ids are keyed, and links made before still open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
DATABASE_URL = "mysql://memoryboard:hunter2-db-password@db.internal/memoryboard"


def _env(tmp_path, **extra) -> dict:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", **extra}
    for name, value in list(env.items()):
        if value is None:
            env.pop(name)
    return env


def test_without_a_secret_key_and_debug_off_manage_py_refuses_with_the_fix(tmp_path):
    env = _env(tmp_path, MEMORYBOARD_SECRET_KEY=None, MEMORYBOARD_DEBUG="0")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert "memoryboard.E010" in done.stderr and "MEMORYBOARD_SECRET_KEY" in done.stderr
    assert "secrets.token_urlsafe" in done.stderr  # the hint says how to make one


def test_without_a_secret_key_and_debug_off_the_wsgi_application_does_not_start(tmp_path):
    env = _env(tmp_path, MEMORYBOARD_SECRET_KEY=None, MEMORYBOARD_DEBUG="0", MEMORYBOARD_EMBEDDER="hashing")
    done = subprocess.run([sys.executable, "-c", "import memoryboard.wsgi"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "ImproperlyConfigured" in done.stderr and "memoryboard.E010" in done.stderr


STRONG_KEY = "a-deployment-key-" + "0123456789abcdef" * 3


@pytest.mark.parametrize("key", ["k", "k" * 50, "short-but-varied-key-0123456789", "django-insecure-" + "x1y2z3" * 9])
def test_a_weak_secret_key_with_debug_off_stops_manage_py_and_the_wsgi_application(tmp_path, key):
    """What Django's deploy check only warns about (security.W009) stops the start, as a missing key does."""
    env = _env(tmp_path, MEMORYBOARD_SECRET_KEY=key, MEMORYBOARD_DEBUG="0", MEMORYBOARD_EMBEDDER="hashing")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and "memoryboard.E011" in done.stderr and "secrets.token_urlsafe" in done.stderr
    assert len(key) < 10 or key not in done.stderr  # the key itself is never printed
    done = subprocess.run([sys.executable, "-c", "import memoryboard.wsgi"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "ImproperlyConfigured" in done.stderr and "memoryboard.E011" in done.stderr


def test_a_weak_secret_key_is_fine_in_the_demo(settings):
    from memoryboard.checks import check_secret_key

    settings.DEBUG, settings.SECRET_KEY = True, "k"
    assert check_secret_key() == []
    settings.DEBUG = False
    assert [error.id for error in check_secret_key()] == ["memoryboard.E011"]
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = STRONG_KEY, ["old"]
    assert [error.msg.split(" ")[0] for error in check_secret_key()] == ["SECRET_KEY_FALLBACKS[0]"]


@pytest.mark.parametrize("extra", [{"MEMORYBOARD_SECRET_KEY": STRONG_KEY, "MEMORYBOARD_DEBUG": "0"},
                                   {"MEMORYBOARD_SECRET_KEY": None, "MEMORYBOARD_DEBUG": "1"}],
                         ids=["key-set", "demo-debug"])
def test_with_a_key_or_in_the_demo_the_checks_pass(tmp_path, extra):
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=_env(tmp_path, **extra),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def demo(settings):
    settings.DEBUG = True
    settings.MEMORYBOARD_TECHNICAL_ERROR_PAGES = False


@pytest.mark.django_db
def test_a_bad_host_in_the_demo_gets_the_sites_400_page_not_the_technical_one(demo):
    # Under runserver the request's variables include the environment, DATABASE_URL with them.
    response = Client().get("/", HTTP_HOST="evil.example", DATABASE_URL=DATABASE_URL)
    html = response.content.decode()
    assert response.status_code == 400
    assert 'class="topbar"' in html
    assert "hunter2" not in html and "DATABASE_URL" not in html and "DisallowedHost" not in html
    assert "Traceback" not in html and "ALLOWED_HOSTS" not in html


@pytest.mark.django_db
def test_a_technical_page_asked_for_still_masks_database_url_and_keys(settings):
    settings.DEBUG = True
    settings.MEMORYBOARD_TECHNICAL_ERROR_PAGES = True
    settings.OPENAI_BASE_URL = "https://user:openai-url-secret@llm.internal/v1"
    response = Client().get("/", HTTP_HOST="evil.example", DATABASE_URL=DATABASE_URL,
                            OPENAI_API_KEY="sk-live-key-value", HTTP_ACCEPT="text/html")
    html = response.content.decode()
    assert response.status_code == 400 and "DisallowedHost" in html  # Django's page, as asked
    assert "DATABASE_URL" in html and "hunter2" not in html
    assert "sk-live-key-value" not in html and "openai-url-secret" not in html
    assert settings.SECRET_KEY not in html


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True])
def test_unknown_v1_paths_are_a_json_404_listing_no_url_patterns(settings, debug):
    settings.DEBUG = debug
    for path in ("/v1/nope", "/v1/chat/nope/", "/v1/models/x/y"):
        response = Client().get(path)
        assert response.status_code == 404 and response["Content-Type"].startswith("application/json")
        text = response.content.decode()
        assert "URL" not in text and "chat/completions" not in text and "admin/" not in text


@pytest.mark.django_db
def test_trace_ids_are_keyed_not_the_sha256_of_the_content_and_old_links_open(login, developer, settings):
    import hashlib

    from memoryboard.models import PlaygroundTrace
    from memoryboard.web.playground.source import trace_store

    messages = [{"role": "user", "content": "a trace someone could guess"}]
    plain = hashlib.sha256(json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
                           .encode()).hexdigest()
    trace = trace_store(messages=messages, actor=developer)
    assert trace.pk != plain and len(trace.pk) == 64
    assert trace_store(messages=messages, actor=developer).pk == trace.pk  # the same paste, the same link
    settings.SECRET_KEY = "another-deployment-" + "x" * 40
    assert PlaygroundTrace.digest(messages) != trace.pk  # it depends on the key
    # A link shared before the change (its id the plain SHA-256) still opens.
    PlaygroundTrace.objects.create(pk=plain, messages=[{"role": "user", "content": "shared last week"}])
    response = login(developer).get(f"/playground/?trace={plain}")
    assert response.status_code == 200 and "shared last week" in response.content.decode()


def test_the_stdio_mcp_server_needs_no_secret_key(tmp_path):
    """It signs nothing; an MCP host's config names only the token and the database."""
    env = _env(tmp_path, MEMORYBOARD_SECRET_KEY=None, MEMORYBOARD_DEBUG="0")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    done = subprocess.run([sys.executable, "manage.py", "mcp", "--token", "nope"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "token is not valid" in done.stderr and "E010" not in done.stderr
