"""Pages that say what really happened, in a real browser at 1366 px, in English and Chinese.

- The end user sees a statement replaced by a newer one, with the newer one and Undo, and undoes it; turns
  on "ask me first" for an agent, after which what the agent notes waits for her approval.
- Support reverts an item to an earlier text on the user page: in place (htmx), and without JavaScript
  (the history is then a styled page of its own, the revert a plain form).

Screenshots in tests/artifacts/states_*.png.
"""

from __future__ import annotations

import pytest

from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import ArchivedReason, AskFirst, LongTermMemory
from memoryboard.models.namespaces import build_namespace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = {
    "en": {"replaced": "Replaced by a newer statement", "rejected": "You rejected it", "ask": "Ask me first",
           "reverted": "Reverted to version 1", "history": "History"},
    "zh-hans": {"replaced": "已被更新的陈述替换", "rejected": "你于", "ask": "先问我",
                "reverted": "已恢复到第 1 版", "history": "历史"},
}


def _save(user, content, source="auto_extract"):
    return memory_save_reconciled(namespace=build_namespace(agent_namespace="chat", user_id=str(user.pk)),
                                  content=content, memory_type="FACT", agent_id="chat", source=source).memory


def _open(session, user, language):
    s = session()
    s.page.set_viewport_size({"width": 1366, "height": 900})
    s.login(user)
    s.use_language(language)
    return s


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_end_user_undoes_a_replacement_and_asks_to_be_asked_first(session, alice, language):
    words = WORDS[language]
    old = _save(alice, "I live in Shanghai")
    new = _save(alice, "I moved to Berlin")
    assert LongTermMemory.objects.get(pk=old.pk).archived_reason == ArchivedReason.SUPERSEDED
    s = _open(session, alice, language)
    s.goto("/me/memories/")
    replaced = s.page.locator("#replaced")
    assert words["replaced"] in replaced.inner_text()
    row = replaced.locator(f"li[data-id='{old.pk}']")
    assert "I live in Shanghai" in row.inner_text() and "I moved to Berlin" in row.inner_text()
    row.scroll_into_view_if_needed()
    s.shot(f"states_replaced_{language}")
    with s.page.expect_navigation():
        row.locator("button[data-action=undo-replacement]").click()
    assert not LongTermMemory.objects.get(pk=old.pk).archived
    assert LongTermMemory.objects.get(pk=new.pk).archived_reason == ArchivedReason.REJECTED
    assert words["rejected"] in s.page.locator("#rejected").inner_text()
    assert s.page.locator(f"#current li[data-id='{old.pk}']").count() == 1

    # "Ask me first" for the chat assistant: what it notes next waits for her.
    form = s.page.locator("#ask-first")
    assert words["ask"] in form.inner_text()
    form.locator("input[value=chat]").check()
    with s.page.expect_navigation():
        form.locator("button[data-action=ask-first]").click()
    assert AskFirst.objects.get(user_id=str(alice.pk), agent_id="chat").ask_first
    assert s.page.locator("#ask-first input[value=chat]").is_checked()
    noted = _save(alice, "I am a data engineer")
    assert noted.archived and noted.archived_reason == ArchivedReason.PENDING_REVIEW
    s.goto("/me/memories/")
    pending = s.page.locator(f"#memory-review-pending tr[data-id='{noted.pk}']")
    assert pending.count() == 1 and pending.locator("button[data-action=approve]").is_visible()
    assert s.page.locator(f"[data-id='{noted.pk}']").count() == 1  # once on the page
    s.shot(f"states_ask_first_{language}")
    assert s.csp_violations == []


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_support_reverts_on_the_user_page_with_javascript(session, alice, support_user, language):
    words = WORDS[language]
    memory = _save(alice, "Rides a bike", source="manual")
    memory_update(memory=memory, actor=None, content="Rides a red bike")
    s = _open(session, support_user, language)
    s.goto(f"/support/users/{alice.pk}/")
    row = s.page.locator(f"#item-{memory.pk}")
    row.locator("details.desk-history summary").click()
    revert = row.locator("tr.version[data-version='1'] button[data-action=revert]")
    revert.wait_for()
    url = s.page.url
    revert.click()
    row.locator(".desk-done").wait_for()
    assert words["reverted"] in row.locator(".desk-done").inner_text()
    assert s.page.url == url  # in place: no navigation
    assert LongTermMemory.objects.get(pk=memory.pk).content == "Rides a bike"
    s.shot(f"states_support_revert_{language}")
    assert s.csp_violations == []


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_support_reverts_on_the_user_page_without_javascript(browser, live_server, alice, support_user, language):
    from tests.browser.conftest import Session

    words = WORDS[language]
    memory = _save(alice, "Rides a bike", source="manual")
    memory_update(memory=memory, actor=None, content="Rides a red bike")
    context = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 900}, java_script_enabled=False)
    try:
        s = Session(context.new_page(), live_server.url)
        s.login(support_user).use_language(language)
        s.goto(f"/support/users/{alice.pk}/")
        row = s.page.locator(f"#item-{memory.pk}")
        row.locator("details.desk-history summary").click()  # opens without JavaScript: a plain link inside
        with s.page.expect_navigation():
            row.locator(".desk-history-body a").click()
        assert words["history"] in s.page.locator("h1").inner_text()
        # A styled page: the site's header and stylesheet, not a bare fragment.
        assert s.page.locator("header").count() >= 1 and s.page.locator("link[rel=stylesheet]").count() >= 1
        with s.page.expect_navigation():
            s.page.locator("tr.version[data-version='1'] button[data-action=revert]").click()
        assert words["reverted"] in s.text()
        assert LongTermMemory.objects.get(pk=memory.pk).content == "Rides a bike"
        s.shot(f"states_support_revert_nojs_{language}")
    finally:
        context.close()
