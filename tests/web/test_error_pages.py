"""Error pages 400/403/404/500: the site's look and language, a way back, in production and in the demo."""

from __future__ import annotations

import pytest
from django.core.exceptions import BadRequest
from django.test import Client
from django.urls import path

from memoryboard.urls import urlpatterns as site_urls

pytestmark = pytest.mark.django_db


def _boom(request):
    raise RuntimeError("boom")


def _bad(request):
    raise BadRequest("bad")


urlpatterns = site_urls + [path("test-boom/", _boom), path("test-bad/", _bad)]
handler400 = "memoryboard.web.errors.bad_request"
handler403 = "memoryboard.web.errors.permission_denied"
handler404 = "memoryboard.web.errors.page_not_found"
handler500 = "memoryboard.web.errors.server_error"


@pytest.fixture
def urls(settings):
    settings.ROOT_URLCONF = __name__


@pytest.fixture(params=[False, True], ids=["production", "demo-debug"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


def _page(response) -> str:
    html = response.content.decode()
    assert 'class="topbar"' in html and "memoryboard" in html  # the site's look
    assert 'href="/"' in html  # a way back home
    return html


def test_404_is_the_sites_page_in_both_modes(debug, login, alice):
    client = login(alice)
    response = client.get("/no/such/page/", HTTP_REFERER="http://testserver/me/memories/")
    assert response.status_code == 404
    html = _page(response)
    assert "Page not found" in html and 'href="http://testserver/me/memories/"' in html
    assert "Django tried these URL patterns" not in html and "Using the URLconf" not in html
    assert "My memories" in html  # the navigation of a signed-in user


def test_404_of_a_view_in_both_modes(debug, login, alice):
    response = login(alice).get("/me/memories/no-such-id/")
    assert response.status_code == 404 and "Page not found" in _page(response)


def test_404_is_in_chinese_by_default(debug, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    response = Client().get("/no/such/page/")
    html = _page(response)
    assert "页面不存在" in html and '<html lang="zh-hans">' in html and "Page not found" not in html


def test_a_foreign_referer_is_not_offered_as_the_way_back(login, alice):
    html = _page(login(alice).get("/no/such/page/", HTTP_REFERER="https://evil.example/x"))
    assert "evil.example" not in html


def test_403_page(debug, login, alice):
    response = login(alice).get("/playground/")
    assert response.status_code == 403 and "Not allowed" in _page(response)


def test_csrf_failure_says_what_to_do(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/me/memories/delete-all/")
    assert response.status_code == 403 and "Reload the page" in _page(response)


def test_400_page(debug, urls, login, alice):
    response = login(alice).get("/test-bad/")
    assert response.status_code == 400 and "Bad request" in _page(response)


def test_500_page_in_both_modes(debug, urls, login, alice):
    client = login(alice)
    client.raise_request_exception = False
    response = client.get("/test-boom/")
    assert response.status_code == 500
    html = _page(response)
    assert "Something went wrong" in html and "RuntimeError" not in html and "Traceback" not in html


def test_technical_pages_can_be_asked_for_in_debug(settings, login, alice):
    settings.DEBUG = True
    settings.MEMORYBOARD_TECHNICAL_ERROR_PAGES = True
    html = login(alice).get("/no/such/page/").content.decode()
    assert "Using the URLconf" in html


def test_api_paths_answer_json(debug):
    response = Client().get("/api/v1/no-such-thing/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_an_end_user_at_the_admin_gets_the_sites_403(debug, login, alice):
    client = login(alice)
    for url in ("/admin/", "/admin/memoryboard/longtermmemory/", "/admin/login/?next=/admin/"):
        response = client.get(url)
        assert response.status_code == 403, url
        html = _page(response)
        assert "Not allowed" in html and "not authorized" not in html
    assert client.post("/admin/logout/").status_code in (200, 302)  # logging out still works
    assert Client().get("/admin/").status_code == 302  # signed out: the admin's login form, as before


def test_a_visit_to_a_post_only_address_is_the_sites_405(debug, login, support_user, bob):
    response = login(support_user).get(f"/support/users/{bob.pk}/export/")
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert "Not a page" in _page(response)
