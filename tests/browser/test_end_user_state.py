"""An end user in a real browser (1366 px, English and Chinese): memory turned off shows a banner that turns
it back on in one click; a delete offers Undo right where the page opens; the search box filters every
section. Screenshots in tests/artifacts/end_user_*.png."""

from __future__ import annotations

import pytest

from memoryboard.models import ArchivedReason, LongTermMemory, UserMemorySettings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_memory_off_banner_undo_and_search(session, alice, make_memory, language):
    tea = make_memory(alice, "I like green tea")
    make_memory(alice, "I work from Berlin", memory_type="PREFERENCE")
    make_memory(alice, "tea was archived by support", archived_reason=ArchivedReason.STAFF)
    make_memory(alice, "coffee was archived by support", archived_reason=ArchivedReason.STAFF)
    UserMemorySettings.objects.create(user_id=str(alice.pk), use_memories=False, save_memories=True)
    s = session()
    s.page.set_viewport_size({"width": 1366, "height": 900})
    s.login(alice)
    s.use_language(language)
    s.goto("/me/memories/")
    banner = s.page.locator("#memory-off")
    assert banner.is_visible()
    s.shot(f"end_user_memory_off_{language}")
    with s.page.expect_navigation():
        banner.locator("button[data-action=memory-on]").click()
    assert s.page.locator("#memory-off").count() == 0
    settings = UserMemorySettings.objects.get(user_id=str(alice.pk))
    assert settings.use_memories and settings.save_memories

    # Delete one item: the page opens on the Undo bar naming it.
    with s.page.expect_navigation():
        s.page.locator(f"li[data-id='{tea.pk}'] button[data-action=delete]").click()
    bar = s.page.locator("#undo-bar")
    assert bar.is_visible() and "I like green tea" in bar.inner_text()
    assert bar.bounding_box()["y"] < 900  # in view, not at the bottom of a long page
    s.shot(f"end_user_undo_{language}")
    with s.page.expect_navigation():
        bar.locator("button[data-action=undo]").click()
    assert not LongTermMemory.objects.get(pk=tea.pk).archived

    # The search box filters the archived section too.
    s.page.fill("form.searchbar input[name=q]", "tea")
    with s.page.expect_navigation():
        s.page.locator("form.searchbar button[type=submit]").click()
    archived = s.page.locator("#archived").inner_text()
    assert "tea was archived by support" in archived and "coffee" not in archived
    s.shot(f"end_user_search_{language}")
    assert s.csp_violations == []
