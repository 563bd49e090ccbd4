"""The dashboard answers: login page, home, admin with demo data, API health and schema."""

from __future__ import annotations

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_anonymous_is_sent_to_login(client):
    response = client.get("/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.get("/accounts/login/").status_code == 200


@pytest.mark.django_db
def test_admin_shows_the_demo_memories(client):
    call_command("seed_demo")
    assert client.login(username="support", password="memoryboard-demo")
    response = client.get("/admin/memoryboard/longtermmemory/")
    assert response.status_code == 200
    assert "Spring Boot" in response.content.decode()


@pytest.mark.django_db
def test_api_health_and_schema(client):
    assert client.get("/api/v1/health/").json()["status"] == "ok"
    schema = client.get("/api/schema/")
    assert schema.status_code == 200


@pytest.mark.django_db
def test_every_page_carries_a_content_security_policy(client):
    response = client.get("/accounts/login/")
    assert "default-src 'self'" in response["Content-Security-Policy"]


@pytest.mark.django_db
def test_favicon_is_served_not_a_404(client):
    # Every page (dashboard, admin, API docs) makes the browser ask for /favicon.ico.
    from django.contrib.staticfiles import finders

    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/memoryboard/favicon.svg"
    assert finders.find("memoryboard/favicon.svg")
