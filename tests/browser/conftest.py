"""Browser tests: Playwright for Python driving Debian's chromium against pytest-django's live server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
PASSWORD_PREFIX = "pw-"  # tests/conftest.py gives each user the password "pw-<username>"

# Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from a thread with a
# running loop unless told otherwise.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    reason = None
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "playwright is not installed (pip install -r requirements-dev.txt)"
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(here):
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _fast_english(settings):
    settings.LANGUAGE_CODE = "en"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module")
def browser():
    """One headless chromium per module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


class Session:
    """A signed-in browser page with the helpers the scenarios share."""

    def __init__(self, page, base_url: str):
        self.page = page
        self.base_url = base_url
        self.dialogs: list[str] = []
        page.on("dialog", self._on_dialog)
        self.accept_dialogs = False
        self.csp_violations: list[str] = []
        page.on("console", self._on_console)

    def _on_console(self, message):
        if "Content Security Policy" in message.text:
            self.csp_violations.append(message.text)

    def _on_dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.accept() if self.accept_dialogs else dialog.dismiss()

    def goto(self, path: str):
        response = self.page.goto(self.base_url + path)
        self.page.wait_for_load_state("load")
        return response

    def login(self, user):
        self.goto("/accounts/login/")
        self.page.fill("#id_username", user.get_username())
        self.page.fill("#id_password", PASSWORD_PREFIX + user.get_username())
        self.page.locator("form button[type=submit], form input[type=submit]").last.click()
        self.page.wait_for_load_state("load")
        assert "/accounts/login/" not in self.page.url, "login failed"
        return self

    def use_language(self, language: str):
        """The UI in ``language`` ("en", "zh-hans") from the next page on, as the language switcher sets it."""
        if language != "en":
            self.page.context.add_cookies([{"name": "django_language", "value": language, "url": self.base_url}])
        return self

    def shot(self, name: str):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        # caret="hide" (the default) injects a <style> that the CSP blocks and reports as a violation.
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True, caret="initial")

    def text(self) -> str:
        return self.page.locator("body").inner_text()


@pytest.fixture
def session(browser, live_server):
    """session(): a fresh browser context (English, desktop size) on the live server."""
    contexts = []

    def make():
        context = browser.new_context(locale="en-US", viewport={"width": 1440, "height": 900})
        contexts.append(context)
        return Session(context.new_page(), live_server.url)

    yield make
    for context in contexts:
        context.close()
