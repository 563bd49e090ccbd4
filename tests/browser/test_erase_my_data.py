"""An end user exports, then erases everything stored about them, conversations included: the page says
what goes and that there is no undo, refuses without the box, and leaves another user's data alone.
Screenshots under tests/artifacts/."""

from __future__ import annotations

import json

import pytest

from memoryboard.models import AuditLog, ChatMessage, ConversationOwner, LongTermMemory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_erase_all_my_data_journey(session, alice, bob, make_memory):
    make_memory(alice, "I work as a Java developer in Berlin")
    make_memory(alice, "I like green tea", memory_type="PREFERENCE")
    bobs = make_memory(bob, "Bob keeps bees")
    for role, text in (("USER", "Remember that I moved to Berlin"), ("ASSISTANT", "Noted: you live in Berlin.")):
        ChatMessage.objects.create(conversation_id="trip", agent_id="chat", user_id=str(alice.pk), role=role, content=text)
    ConversationOwner.objects.create(conversation_id="trip", user_id=str(alice.pk), agent_id="chat")
    s = session().login(alice)
    s.goto("/me/memories/")
    assert s.page.locator("a:has-text('Delete all memories…')").count() == 1  # the undoable one stays apart
    with s.page.expect_download() as download:
        s.page.locator("a:has-text('Export all my data (JSON)')").click()
    exported = json.loads(open(download.value.path(), encoding="utf-8").read())
    assert len(exported["memories"]) == 2 and len(exported["chat_messages"]) == 2
    s.page.locator("#erase-all-data").click()
    s.page.wait_for_load_state("load")
    assert "/me/data/erase/" in s.page.url
    text = s.text()
    assert "It cannot be undone" in text and "Your account stays" in text
    counts = dict(s.page.locator("table.erase-list tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.section, r.querySelector('.num').textContent.trim()])"))
    assert counts["memories"] == "2" and counts["chat_messages"] == "2" and counts["conversations"] == "1"
    s.shot("my_data_erase_confirm")
    s.page.locator("#confirm-erase").click()  # without the box: refused, nothing erased
    s.page.wait_for_load_state("load")
    assert s.page.locator("#erase-error").is_visible()
    assert LongTermMemory.objects.count() == 3
    s.shot("my_data_erase_refused")
    s.page.locator("#erase-confirm").check()
    s.page.locator("#confirm-erase").click()
    s.page.wait_for_load_state("load")
    assert s.page.url.endswith("/me/memories/")
    assert "Everything stored about you was erased" in s.text()
    assert s.page.locator("#undo-bar").count() == 0 and s.page.locator("#recently-deleted li[data-id]").count() == 0
    s.shot("my_data_erased")
    assert list(LongTermMemory.objects.values_list("pk", flat=True)) == [bobs.pk]
    assert not ChatMessage.objects.filter(user_id=str(alice.pk)).exists()
    assert AuditLog.objects.filter(action="erase", object_id=str(alice.pk)).count() == 1


def test_api_docs_lead_back_to_the_dashboard(browser, live_server, alice):
    from tests.browser.conftest import Session

    context = browser.new_context(locale="zh-CN", viewport={"width": 1440, "height": 900})
    try:
        s = Session(context.new_page(), live_server.url).login(alice)
        s.goto("/api/docs/")
        s.page.wait_for_selector("#swagger-ui .info")  # Swagger UI rendered under our header
        header = s.page.locator("#docs-header").inner_text()
        assert "返回控制台" in header and "下面的 API 参考为英文。" in header and alice.get_username() in header
        s.shot("api_docs_header_zh")
        assert not s.csp_violations, s.csp_violations
        s.page.locator("#docs-back").click()
        s.page.wait_for_load_state("load")
        assert s.page.url == live_server.url + "/"
    finally:
        context.close()
