"""Pages that say what really happens, in a real browser at 1366 px, in English and Chinese: a conflict
settled by editing into one, what the agent would be told for a question, and the playground's strategies
side by side with "Before" pinned. Screenshots in tests/artifacts/tell_*.png."""

from __future__ import annotations

import pytest

from memoryboard.models import ChatMessage, LongTermMemory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LANGUAGES = ["en", "zh-hans"]


def _session(session, user, language):
    s = session()
    s.page.set_viewport_size({"width": 1366, "height": 768})
    s.login(user)
    s.use_language(language)
    return s


@pytest.mark.parametrize("language", LANGUAGES)
def test_playground_shows_every_strategy_beside_before_in_one_row(session, developer, alice, language):
    ChatMessage.objects.bulk_create([
        ChatMessage(conversation_id="c1", agent_id="chat", user_id=str(alice.pk), role="USER" if i % 2 else "ASSISTANT",
                    content=f"message {i} " + "a long line about the deployment pipeline " * (5 + i % 9))
        for i in range(60)])
    s = _session(session, developer, language)
    s.goto("/playground/?conversation=c1")
    row = s.page.locator(".pg-columns").first
    columns = row.locator(":scope > .pg-col")
    assert columns.count() >= 6  # Before and every context strategy
    height = s.page.viewport_size["height"]
    # As the page opens, without scrolling: every column starts on the first screen, side by side.
    tops = columns.evaluate_all("cols => cols.map(c => c.getBoundingClientRect().top)")
    assert max(tops) - min(tops) < 2 and all(0 <= top < height for top in tops), tops
    widths = s.page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], widths  # the row scrolls, not the page
    assert row.evaluate("r => r.scrollWidth > r.clientWidth")
    before = s.page.locator("#col-before")
    left = before.bounding_box()["x"]
    row.evaluate("r => { r.scrollLeft = r.scrollWidth; }")
    s.page.wait_for_timeout(100)
    assert abs(before.bounding_box()["x"] - left) < 1  # pinned
    last = columns.last.bounding_box()
    assert last["x"] + last["width"] <= 1366 and last["x"] >= before.bounding_box()["x"] + before.bounding_box()["width"]
    s.shot(f"tell_playground_row_{language}")
    assert s.csp_violations == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_user_settles_a_conflict_by_editing_it_into_one(session, alice, make_memory, language):
    old = make_memory(alice, "I live in Berlin and work at SAP")
    new = make_memory(alice, "I live in Hamburg")
    for a, b in ((old, new), (new, old)):
        LongTermMemory.objects.filter(pk=a.pk).update(value_json={**a.value_json, "conflictWith": [b.pk]})
    s = _session(session, alice, language)
    s.goto("/me/memories/")
    with s.page.expect_navigation():
        s.page.locator("#memory-review-conflicts a[data-action=settle]").first.click()
    why = s.page.locator("#conflict-why").inner_text()
    assert "berlin" in why and "hamburg" in why and "sap" in why
    lost = s.page.locator("[data-choice=new] ul.loses").inner_text()
    assert "I live in Berlin and work at SAP" in lost  # what "keep the newer" loses is named
    s.page.fill("#conflict-text", "I live in Hamburg and work at SAP")
    with s.page.expect_navigation():
        s.page.click("#conflict-edit-preview")
    keeps = s.page.locator("[data-choice=edit] ul.keeps").inner_text()
    assert "I live in Hamburg and work at SAP" in keeps
    s.shot(f"tell_conflict_{language}")
    with s.page.expect_navigation():
        s.page.click("#conflict-edit-save")
    assert LongTermMemory.objects.get(pk=new.pk).content == "I live in Hamburg and work at SAP"
    assert LongTermMemory.objects.get(pk=old.pk).archived_reason == "superseded"
    assert s.page.locator("#memory-review-conflicts").count() == 0
    assert s.csp_violations == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_user_types_a_question_and_sees_the_memory_block(session, alice, bob, make_memory, language):
    make_memory(alice, "I live in Hamburg")
    make_memory(alice, "I prefer green tea", memory_type="PREFERENCE")
    make_memory(bob, "bob lives in Oslo")
    s = _session(session, alice, language)
    s.goto("/me/memories/")
    with s.page.expect_navigation():
        s.page.click("#beliefs-link")
    listed = s.page.locator("[data-agent=chat]").inner_text()
    assert "I live in Hamburg" in listed and "I prefer green tea" in listed and "Oslo" not in s.text()
    s.page.fill("#beliefs-q", "Where do I live?")
    with s.page.expect_navigation():
        s.page.click("#beliefs-show")
    block = s.page.locator("#beliefs-block-text").inner_text()
    assert block.startswith("<long_term_memory>") and "[FACT] I live in Hamburg" in block
    assert s.page.locator("#beliefs-tokens").inner_text().strip().startswith("≈")
    s.shot(f"tell_beliefs_{language}")
    assert s.csp_violations == []
