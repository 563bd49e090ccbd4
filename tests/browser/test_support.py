"""Support staff in a real browser: find bob by name, his user page, archive and restore from the item page,
both entries in the audit log filtered by bob; a translated 404; the memory list fits 1366 and 1440 px."""

from __future__ import annotations

import pytest

from memoryboard.models import AuditLog, ChatMessage, LongTermMemory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = ("bob prefers detailed answers with code examples in Go and Python, and he asks to keep the "
        "explanations short in the morning because he reads them on his phone on the train")




def _click_and_wait(s, locator):
    with s.page.expect_navigation():
        locator.click()


def test_support_finds_bob_archives_and_restores_and_audits(session, support_user, bob_named, alice, make_memory):
    item = make_memory(bob_named, "bob rides a bike to work", memory_type="PREFERENCE")
    make_memory(bob_named, "bob writes Go", agent="coder")
    make_memory(alice, "alice drives")
    ChatMessage.objects.create(conversation_id="c-bob", agent_id="chat", user_id=str(bob_named.pk), role="USER",
                               content="where is my parcel")
    ChatMessage.objects.create(conversation_id="c-alice", agent_id="chat", user_id=str(alice.pk), role="USER",
                               content="alice's parcel is late")
    s = session().login(support_user)

    # Find bob by name from the navigation.
    s.goto("/")
    _click_and_wait(s, s.page.locator("nav.mainnav a[href='/support/users/']"))
    s.page.fill("input[name=q]", "bob")
    _click_and_wait(s, s.page.locator("form.searchbar button[type=submit]"))
    s.shot("support_people_search_bob")
    _click_and_wait(s, s.page.locator("table.people a", has_text="Bob Builder"))
    assert s.page.url.endswith(f"/support/users/{bob_named.pk}/")
    assert s.page.locator("h1").inner_text() == "Bob Builder"
    assert s.page.locator("#person-items tr[data-agent]").count() == 2  # chat and coder
    assert "alice drives" not in s.text()
    s.shot("support_user_page_bob")

    # His items in the admin, then the item's page.
    _click_and_wait(s, s.page.locator("#person-items h2 a"))
    assert "bob rides a bike to work" in s.text() and "alice drives" not in s.text()
    _click_and_wait(s, s.page.locator("#result_list a", has_text="bob rides a bike"))
    s.shot("admin_item_page")

    # Archive from the item's page: the same confirmation as the bulk action, then back to the item.
    _click_and_wait(s, s.page.locator("button.mb-tool[data-action=archive_selected]"))
    assert "This action applies to 1 item." in s.text()
    s.page.fill("#id_reason", "Duplicate reported in ticket 77")
    s.shot("admin_item_archive_confirm")
    _click_and_wait(s, s.page.locator("form:has(input[name=confirm]) input[type=submit]"))
    assert f"/longtermmemory/{item.pk}/change/" in s.page.url
    assert "Archived 1 item." in s.text()
    assert LongTermMemory.objects.get(pk=item.pk).archived

    # Restore the same way.
    _click_and_wait(s, s.page.locator("button.mb-tool[data-action=restore_selected]"))
    _click_and_wait(s, s.page.locator("form:has(input[name=confirm]) input[type=submit]"))
    assert "Restored 1 item." in s.text()
    assert not LongTermMemory.objects.get(pk=item.pk).archived
    s.shot("admin_item_restored")

    # Both entries in the audit log, filtered by bob (by name, in the subject user filter).
    s.goto("/admin/memoryboard/auditlog/")
    s.page.fill("input[name=subject_user]", "bob")
    _click_and_wait(s, s.page.locator("form.mb-input-filter:has(input[name=subject_user]) button"))
    rows = s.page.locator("#result_list tbody tr")
    texts = [rows.nth(i).inner_text() for i in range(rows.count())]
    item_rows = [t for t in texts if "bob rides a bike to work" in t]  # the item by its text, not its id
    assert any("Archive" in t for t in item_rows) and any("Restore" in t for t in item_rows), texts
    assert len(item_rows) == 3, texts  # create, archive, restore: one entry each, no "Bulk action"
    assert any("Duplicate reported in ticket 77" in t for t in item_rows), texts
    assert all("Bob Builder" in t for t in texts)
    assert AuditLog.objects.filter(object_id=item.pk, action__in=["archive", "restore"]).count() == 2
    s.shot("admin_audit_log_bob")

    # His conversations: chat messages of bob, searched by content.
    s.goto(f"/support/users/{bob_named.pk}/")
    _click_and_wait(s, s.page.locator("#person-conversations h2 a"))
    s.page.fill("#searchbar", "parcel")
    _click_and_wait(s, s.page.locator("#changelist-search input[type=submit]"))
    assert "where is my parcel" in s.text() and "alice's parcel" not in s.text()
    s.shot("admin_chat_bob_search")
    assert s.csp_violations == [], s.csp_violations


def test_a_bad_link_shows_the_translated_404(session, alice, browser, live_server):
    s = session().login(alice)
    s.goto("/me/memories/")
    response = s.goto("/me/memories/no-such-item/")
    assert response.status == 404
    assert s.page.locator(".error-page h1").inner_text() == "Page not found"
    s.shot("error_404_en")
    # In Chinese (the site's default language): a new browser that prefers Chinese.
    context = browser.new_context(locale="zh-CN", viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        response = page.goto(live_server.url + "/no/such/link/")
        assert response.status == 404
        assert page.locator(".error-page h1").inner_text() == "页面不存在"
        assert page.locator(".error-page a.button.primary").get_attribute("href") == "/"
        from tests.browser.conftest import ARTIFACTS

        page.screenshot(path=str(ARTIFACTS / "error_404_zh.png"), full_page=True, caret="initial")
    finally:
        context.close()


@pytest.mark.parametrize("width,locale", [(1366, "en-US"), (1440, "en-US"), (1366, "zh-CN")])
def test_memory_list_columns_fit_the_screen(session, browser, live_server, support_user, bob_named, alice,
                                            make_memory, width, locale):
    from memoryboard.ltm.store.items import memory_archive
    from tests.browser.conftest import ARTIFACTS, Session

    for i in range(12):
        memory = make_memory(bob_named if i % 2 else alice, f"{i}: {LONG}", memory_type=["FACT", "EPISODE"][i % 2])
        if i % 3 == 0:
            memory_archive(memory=memory, actor=support_user)
    context = browser.new_context(locale=locale, viewport={"width": width, "height": 800})
    try:
        s = Session(context.new_page(), live_server.url).login(support_user)
        name = f"{width}_{locale[:2]}"
        s.goto("/admin/memoryboard/longtermmemory/")
        boxes = s.page.locator("#result_list thead th").evaluate_all(
            "els => els.map(e => { const r = e.getBoundingClientRect();"
            " return {cls: e.className, left: r.left, right: r.right, width: r.width}; })")
        assert len(boxes) == 8  # checkbox + seven columns
        for box in boxes:
            assert box["right"] <= width, f"column {box['cls']} ends at {box['right']} px, outside {width} px"
        content = next(b for b in boxes if "column-preview" in b["cls"])
        assert content["width"] >= 250, f"content column is {content['width']} px"
        state = s.page.locator("#result_list td.field-state .mb-state").first
        assert state.is_visible() and state.bounding_box()["x"] + state.bounding_box()["width"] <= width
        scroll = s.page.evaluate("() => document.documentElement.scrollWidth")
        assert scroll <= width, f"the page scrolls sideways ({scroll} px)"
        s.page.screenshot(path=str(ARTIFACTS / f"admin_memory_list_{name}.png"), full_page=False, caret="initial")
        s.goto(f"/support/users/{bob_named.pk}/")
        assert s.page.evaluate("() => document.documentElement.scrollWidth") <= width
        s.page.screenshot(path=str(ARTIFACTS / f"user_page_{name}.png"), full_page=True, caret="initial")
    finally:
        context.close()


def test_support_searches_by_meaning_and_reads_the_score_parts(session, support_user, bob_named, alice, make_memory,
                                                               use_embedder):
    java = make_memory(alice, "用户是Java后端开发者，主要使用Spring Boot")
    make_memory(alice, "alice keeps bees")
    bobs = make_memory(bob_named, "bob writes backend services in Java")
    s = session().login(support_user)
    s.goto("/admin/memoryboard/longtermmemory/")
    _click_and_wait(s, s.page.locator("a.mb-meaning-search"))
    s.page.fill("#id_q", "Java backend developer")
    _click_and_wait(s, s.page.locator("#mb-meaning-form input[type=submit]"))
    rows = s.page.locator("#mb-meaning-results tbody tr")
    ids = rows.evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert set(ids) == {java.pk, bobs.pk}
    first = rows.first.locator("td").all_inner_texts()
    assert len(first) == 15 and float(first[-1]) > 0  # the final score, after cosine … decay (relevance, keyword gate and time too)
    assert "1 below the minimum relevance" in s.text()  # the bees, counted, not shown
    s.shot("admin_search_by_meaning")
    s.page.fill("#id_user", "Bob Builder")
    _click_and_wait(s, s.page.locator("#mb-meaning-form input[type=submit]"))
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.id)") == [bobs.pk]
