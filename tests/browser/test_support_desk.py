"""Support at the desk in a real browser (1366 px): bob's page lists every item in words; support filters,
edits one item in place, archives it with a typed reason, reads its history and restores it, without
leaving the page. Screenshots in tests/artifacts/support_desk_*.png."""

from __future__ import annotations

import re

import pytest

from memoryboard.models import ArchivedReason, LongTermMemory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEX_ID = re.compile(r"\b[0-9a-f]{12,}\b")


def test_support_desk_journey(session, support_user, bob_named, make_memory):
    bike = make_memory(bob_named, "bob rides a bike to work", memory_type="PREFERENCE")
    make_memory(bob_named, "bob writes Go", agent="coder")
    make_memory(bob_named, "bob once lived in Lyon", archived_reason=ArchivedReason.DECAY)
    s = session()
    s.page.set_viewport_size({"width": 1366, "height": 900})
    s.login(support_user)
    s.goto(f"/support/users/{bob_named.pk}/")
    row = s.page.locator(f"#item-{bike.pk}")
    assert "Chat assistant" in row.inner_text() and "Preference" in row.inner_text()
    text = s.text()
    assert not HEX_ID.search(text) and '{"' not in text and "agent:" not in text
    assert "relevance score was below" in text
    s.shot("support_desk_bob")

    # Filter by state: the archived count is what the list shows.
    s.page.select_option("#person-filters select[name=state]", "archived")
    with s.page.expect_navigation():
        s.page.locator("#person-filters button[type=submit]").click()
    assert s.page.locator(".desk-item").count() == 1 and "Lyon" in s.text()
    s.goto(f"/support/users/{bob_named.pk}/")

    # Edit in place (htmx): the row is replaced, the page stays.
    row = s.page.locator(f"#item-{bike.pk}")
    row.locator("details.desk-edit summary").click()
    row.locator("textarea[name=content]").fill("bob rides an e-bike to work")
    row.locator("button[data-action=save]").click()
    s.page.wait_for_selector(f"#item-{bike.pk} .desk-done")
    assert "bob rides an e-bike to work" in s.page.locator(f"#item-{bike.pk} .desk-text").inner_text()
    assert s.page.url.endswith(f"/support/users/{bob_named.pk}/")

    # Archive with a typed reason.
    row = s.page.locator(f"#item-{bike.pk}")
    row.locator("details.desk-archive summary").click()
    row.locator("input[name=note]").fill("customer asked by phone")
    row.locator("button[data-action=archive]").click()
    s.page.wait_for_selector(f"#item-{bike.pk} button[data-action=restore]")
    row = s.page.locator(f"#item-{bike.pk}")
    assert "customer asked by phone" in row.inner_text()
    assert LongTermMemory.objects.get(pk=bike.pk).archived

    # The history, expanded in place.
    row.locator("details.desk-history summary").click()
    s.page.wait_for_selector(f"#item-{bike.pk} .desk-history-table")
    history = row.locator(".desk-history-table").inner_text()
    assert "customer asked by phone" in history and "bob rides a bike to work" in history
    s.shot("support_desk_archived_with_history")

    # Restore: one click, no red "Yes, I'm sure".
    row.locator("button[data-action=restore]").click()
    s.page.wait_for_selector(f"#item-{bike.pk} details.desk-archive")
    assert not LongTermMemory.objects.get(pk=bike.pk).archived
    assert s.csp_violations == []
