"""Issue 15 journeys: a developer compares every strategy at one budget and shares the view; an end user
edits a memory, deletes all and undoes it in one step. Screenshots under tests/artifacts/."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest

from memoryboard.models import AuditLog, LongTermMemory
from memoryboard.strategies import CONTEXT_STRATEGIES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _trace(n: int = 300) -> list[dict]:
    out = [{"role": "system", "content": "You are a helpful coding assistant."}]
    for i in range(1, n):
        role = "user" if i % 2 else "assistant"
        out.append({"role": role, "content": f"{role} turn {i}: " + "about the deployment pipeline " * (2 + i % 9)})
    return out


def _artifact(name):
    from tests.browser.conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"


def _view(page) -> dict:
    """What the comparison shows: the ranking and each column's numbers."""
    ranking = page.locator("#pg-summary tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.strategy, r.dataset.meets])")
    columns = page.locator(".pg-col[data-strategy]").evaluate_all(
        "cols => cols.map(c => [c.dataset.strategy, c.dataset.tokensAfter, c.dataset.kept, c.dataset.fitParams])")
    return {"ranking": ranking, "columns": columns, "budget": page.locator("input[name=budget]").input_value()}


def test_developer_compares_all_strategies_at_one_budget_and_shares_the_view(session, developer, support_user):
    s = session().login(developer)
    s.goto("/playground/")
    s.page.fill("textarea[name=messages_json]", json.dumps(_trace()))
    s.page.click("#pg-paste button[type=submit]")
    s.page.wait_for_load_state("load")
    assert "trace=" in s.page.url and "Pasted input: 300 messages." in s.text()
    # One shared Before column, not one per strategy.
    assert s.page.locator("#col-before").count() == 1 and s.page.locator(".pg-before").count() == 1
    s.shot("i15_playground_pasted_300")

    s.page.check("input[name=mode][value=budget]")
    s.page.wait_for_selector("#pg-summary")
    s.page.fill("input[name=budget]", "2500")
    s.page.locator("input[name=budget]").dispatch_event("change")
    s.page.wait_for_function("() => document.querySelector('#pg-results').dataset.budget === '2500'")
    query = parse_qs(urlparse(s.page.url).query)
    assert query["mode"] == ["budget"] and query["budget"] == ["2500"] and "trace" in query
    view = _view(s.page)
    assert {name for name, _ in view["ranking"]} == set(CONTEXT_STRATEGIES)
    for name, tokens, _kept, _params in view["columns"]:
        if name in ("TRIM", "SLIDING_WINDOW", "SUMMARIZE", "COMPOSITE"):
            assert float(tokens) <= 2500, name
    assert "≈ 2,500" in s.page.locator("#pg-summary h2").inner_text()
    assert "tokens (estimated)" in s.page.locator("#col-trim .pg-stats").inner_text()
    assert s.csp_violations == []
    s.shot("i15_playground_same_budget")
    s.page.screenshot(path=str(_artifact("i15_playground_same_budget_top")), caret="initial")  # what one sees first
    box = s.page.locator("#pg-summary").bounding_box()
    s.page.screenshot(path=str(_artifact("i15_playground_same_budget_columns")), full_page=True, caret="initial",
                      clip={"x": 0, "y": box["y"], "width": 1440, "height": 1400})

    s.page.reload()
    s.page.wait_for_load_state("load")
    assert _view(s.page) == view  # a reload keeps the whole configuration
    shared = s.page.url

    other = session().login(support_user)  # a new session, another person
    other.goto(urlparse(shared).path + "?" + urlparse(shared).query)
    assert _view(other.page) == view
    other.shot("i15_playground_shared_link")


def test_end_user_edits_a_memory_deletes_all_and_undoes_it_in_one_step(session, alice, make_memory):
    items = [make_memory(alice, text, memory_type=kind, source=source) for text, kind, source in (
        ("Likes green tea", "PREFERENCE", "auto_extract"),
        ("Works as a Java developer in Berlin", "FACT", "agent_tool"),
        ("Deploys on Fridays after the tests pass", "PROCEDURE", "manual"),
    )]
    s = session().login(alice)
    s.goto("/")
    assert "REST API" not in s.text() and "OPENAI_BASE_URL" not in s.text()
    s.goto("/me/memories/")
    body = s.text()
    assert "noted by Chat assistant from a chat" in body and "Auto-extracted" not in body
    s.shot("i15_my_memories")

    s.page.locator(f"li.mem[data-id='{items[0].pk}'] a[data-action=edit]").click()
    s.page.wait_for_load_state("load")
    s.page.fill("#edit textarea[name=content]", "Likes black coffee, no sugar")
    s.page.click("button[data-action=save-edit]")
    s.page.wait_for_load_state("load")
    assert LongTermMemory.objects.get(pk=items[0].pk).content == "Likes black coffee, no sugar"
    assert "Likes black coffee, no sugar" in s.page.locator("h1.mem-title").inner_text()
    assert "Likes green tea" in s.page.locator(".edit-history").inner_text()
    s.shot("i15_memory_edited")

    s.goto("/me/memories/")
    s.page.click("a.button.danger[href$='/delete-all/']")
    s.page.wait_for_load_state("load")
    assert "Delete 3 of your memories?" in s.text()
    s.page.click("#confirm-bulk")
    s.page.wait_for_load_state("load")
    assert LongTermMemory.objects.filter(archived=True).count() == 3
    bar = s.page.locator("#undo-bar")
    assert "You deleted 3 memories." in bar.inner_text()
    s.shot("i15_deleted_all")
    bar.locator("button[data-action=undo-batch]").click()
    s.page.wait_for_load_state("load")
    assert LongTermMemory.objects.filter(archived=True).count() == 0
    assert "3 memories restored." in s.text()
    assert s.page.locator(".mem-group li.mem").count() == 3
    # One entry per thing that happened: each item's restore, no extra entry for the batch.
    assert AuditLog.objects.filter(object_type="memory", action="restore").count() == 3
    assert not AuditLog.objects.filter(object_type="memory_delete_batch", action="restore").exists()
    s.shot("i15_undone")
    with s.page.expect_navigation():  # the language switch submits itself: the same page in Chinese
        s.page.select_option("select[name=language]", "zh-hans")
    s.page.wait_for_load_state("load")
    assert "我的记忆" in s.text() and "Auto-extracted" not in s.text()
    s.shot("i15_undone_zh")


def test_an_opened_long_message_shows_its_text_once(session, developer):
    long_text = "The deployment pipeline builds the image, runs the tests and pushes to staging. " * 6
    s = session().login(developer)
    s.goto("/playground/")
    s.page.fill("textarea[name=messages_json]", json.dumps([{"role": "user", "content": long_text},
                                                           {"role": "assistant", "content": "ok"}]))
    s.page.click("#pg-paste button[type=submit]")
    s.page.wait_for_load_state("load")
    message = s.page.locator("#col-before details.msg-content").first
    assert message.locator("summary .preview").is_visible()
    assert not message.locator(".msg-full").is_visible()
    message.locator("summary").click()
    # Open, the full text is there once: the summary's preview gives way to a label.
    assert message.locator(".msg-full").is_visible()
    assert not message.locator("summary .preview").is_visible()
    assert message.locator("summary .when-open").inner_text() == "Full text"
    assert message.inner_text().count("pushes to staging") == 6
