"""The dashboard in a real browser: roles and navigation, admin restore, playground htmx, undo, XSS."""

from __future__ import annotations

import pytest

from memoryboard.models import ArchivedReason, ChatMessage, LongTermMemory
from memoryboard.web.playground.rows import parse_ids
from tests.browser.conftest import Session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

XSS_SCRIPT = "<script>alert('xss-script')</script>"
XSS_IMG = "<img src=x onerror=alert('xss-img')>"


def _conversation(user, n=30, *, conversation_id="c1", extra=()):
    rows = [
        ChatMessage(conversation_id=conversation_id, agent_id="chat", user_id=str(user.pk),
                    role="USER" if i % 2 else "ASSISTANT", content=f"message {i} " + "word " * (10 + i % 7))
        for i in range(n)
    ]
    rows += [ChatMessage(conversation_id=conversation_id, agent_id="chat", user_id=str(user.pk), role="USER",
                         content=text) for text in extra]
    ChatMessage.objects.bulk_create(rows)


def _nav(s) -> set[str]:
    return set(s.page.locator("nav.mainnav a").evaluate_all("els => els.map(e => e.getAttribute('href'))"))


@pytest.mark.parametrize(
    "role,admin,playground",
    [("superuser", True, True), ("support_user", True, True), ("developer", True, True), ("alice", False, False)],
)
def test_each_role_sees_the_right_navigation(request, session, role, admin, playground):
    user = request.getfixturevalue(role)
    s = session().login(user)
    s.goto("/")
    links = _nav(s)
    assert ("/admin/" in links) is admin
    assert ("/playground/" in links) is playground
    assert "/me/memories/" in links
    assert s.page.locator(".who").inner_text() == user.get_username()
    s.shot(f"home_{role}")
    response = s.goto("/playground/")
    assert response.status == (200 if playground else 403)
    if playground:
        s.shot(f"playground_empty_{role}")


def test_support_restores_an_archived_memory_in_the_admin(session, support_user, alice, make_memory):
    memory = make_memory(alice, "archived by staff, please restore", archived_reason=ArchivedReason.STAFF)
    s = session().login(support_user)
    s.goto("/admin/memoryboard/longtermmemory/?archived__exact=1")
    s.shot("admin_changelist_archived")
    s.page.check(f"input[name=_selected_action][value='{memory.pk}']")
    s.page.select_option("select[name=action]", "restore_selected")
    s.page.click("button[name=index]")
    s.page.wait_for_load_state("load")
    confirm = s.page.locator("form input[name=confirm][value=yes]")
    if confirm.count():  # the admin's confirmation step (count and sample)
        s.shot("admin_restore_confirm")
        s.page.locator("form:has(input[name=confirm]) input[type=submit]").click()
        s.page.wait_for_load_state("load")
    s.shot("admin_restored")
    assert not LongTermMemory.objects.get(pk=memory.pk).archived


def test_sliding_window_budget_updates_only_its_column(session, developer, alice):
    _conversation(alice, 40)
    s = session().login(developer)
    s.goto("/playground/?conversation=c1")
    s.shot("playground_conversation")
    column = s.page.locator("#col-sliding_window")
    before_after = column.get_attribute("data-tokens-after")
    before_kept = column.get_attribute("data-kept")
    # Mark the other columns: a re-rendered element would lose the mark.
    s.page.evaluate("document.querySelectorAll('.pg-col').forEach(c => c.dataset.probe = 'untouched')")
    field = column.locator("input[name='c-sliding_window-max_tokens']")
    field.fill("120")
    field.dispatch_event("change")
    s.page.wait_for_function(
        "v => document.querySelector('#col-sliding_window').dataset.tokensAfter !== v", arg=before_after
    )
    column = s.page.locator("#col-sliding_window")
    assert column.get_attribute("data-kept") != before_kept
    assert float(column.get_attribute("data-tokens-after")) <= 120
    assert column.get_attribute("data-probe") is None
    for other in ("trim", "summarize", "composite"):
        assert s.page.locator(f"#col-{other}").get_attribute("data-probe") == "untouched"
    assert column.locator("input[name='c-sliding_window-max_tokens']").input_value() == "120"
    assert column.locator(".msg-run.msg-dropped").count() >= 1  # dropped run collapsed with a count
    assert s.csp_violations == [], s.csp_violations  # no inline script or style anywhere
    # The screen as seen (not the full page: capturing beyond the viewport re-lays out the sideways-scrolling
    # row while the edited field has focus, and its change could fire again after the next edit's).
    s.page.screenshot(path=str(_artifact("playground_sliding_window_120")), caret="initial")
    # A bad value is a 400 naming the field, shown in the column. The swapped column is settled first: an edit made
    # before htmx has processed the new column sends nothing (seen once, under load, on MariaDB).
    s.page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")
    field = column.locator("input[name='c-sliding_window-max_tokens']")
    field.fill("0")
    field.dispatch_event("change")
    s.page.wait_for_selector("#col-sliding_window[data-error]")
    assert "max_tokens" in s.page.locator("#col-sliding_window .error").inner_text()


def test_pasted_json_error_is_shown(session, developer):
    s = session().login(developer)
    s.goto("/playground/")
    s.page.fill("textarea[name=messages_json]", '[{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]')
    s.page.click("#pg-paste button[type=submit]")
    s.page.wait_for_load_state("load")
    assert "messages[1].role" in s.page.locator("#pg-input-error").inner_text()
    s.shot("playground_json_error")


def test_staff_applies_a_memory_plan_after_confirming(session, support_user, alice):
    _conversation(alice, 10)
    s = session().login(support_user)
    s.goto("/playground/?conversation=c1&m-delete-keep_latest=4#memory")
    plan = s.page.locator("#plan-delete")
    assert len(parse_ids(plan.get_attribute("data-delete-ids"))) == 6
    plan.locator("a[data-action=review-apply]").click()
    s.page.wait_for_load_state("load")
    # The confirmation says what will be deleted; cancelling changes nothing.
    assert "This deletes 6 of the conversation's 10 stored messages for good" in s.text()
    assert s.page.locator("#confirm-apply li.msg").count() == 6
    s.shot("playground_memory_confirm")
    s.page.locator("#confirm-apply a.button", has_text="Cancel").click()
    s.page.wait_for_load_state("load")
    assert ChatMessage.objects.count() == 10
    s.page.locator("#plan-delete a[data-action=review-apply]").click()
    s.page.wait_for_load_state("load")
    s.page.click("#confirm-apply-button")
    s.page.wait_for_load_state("load")
    s.page.wait_for_selector(".messages li.success")
    assert ChatMessage.objects.count() == 4
    s.shot("playground_memory_applied")


def test_delete_own_memory_and_undo(session, alice, make_memory):
    keep = make_memory(alice, "I like green tea", memory_type="PREFERENCE")
    memory = make_memory(alice, "I work as a Java developer in Berlin", memory_type="FACT")
    s = session().login(alice)
    s.goto("/me/memories/")
    s.shot("my_memories")
    s.page.locator(f"li.mem[data-id='{memory.pk}'] button[data-action=delete]").click()
    s.page.wait_for_load_state("load")
    assert LongTermMemory.objects.get(pk=memory.pk).archived
    deleted = s.page.locator(f"#recently-deleted li[data-id='{memory.pk}']")
    assert deleted.count() == 1
    s.shot("my_memories_deleted")
    deleted.locator("button[data-action=undo]").click()
    s.page.wait_for_load_state("load")
    assert not LongTermMemory.objects.get(pk=memory.pk).archived
    assert s.page.locator(f".mem-group li.mem[data-id='{memory.pk}']").count() == 1
    assert s.page.locator(f".mem-group li.mem[data-id='{keep.pk}']").count() == 1
    s.shot("my_memories_restored")
    s.goto("/me/memories/delete-all/")
    s.shot("my_memories_delete_all")


def test_hostile_content_is_shown_as_text_everywhere(session, alice, support_user, developer, make_memory):
    hostile = f"{XSS_SCRIPT} and {XSS_IMG}"
    memory = make_memory(alice, hostile)
    make_memory(alice, "deleted " + hostile, archived_reason=ArchivedReason.USER_DELETED)
    _conversation(alice, 4, extra=[XSS_SCRIPT, XSS_IMG])

    pages = [
        (alice, "/me/memories/", "xss_my_memories"),
        (alice, "/me/memories/delete-all/", "xss_delete_all"),
        (alice, f"/me/memories/{memory.pk}/", "xss_memory_detail"),
        (developer, "/playground/?conversation=c1", "xss_playground"),
        (support_user, "/admin/memoryboard/longtermmemory/", "xss_admin_changelist"),
        (support_user, f"/admin/memoryboard/longtermmemory/{memory.pk}/change/", "xss_admin_change"),
        (support_user, "/admin/memoryboard/chatmessage/", "xss_admin_chat"),
    ]
    sessions = {}
    for user, path, name in pages:
        s = sessions.get(user.pk) or sessions.setdefault(user.pk, session().login(user))
        response = s.goto(path)
        assert response.status == 200, path
        s.page.wait_for_timeout(150)  # let any (wrongly) injected handler fire
        s.shot(name)
        assert s.dialogs == [], f"a dialog fired on {path}"
        body = s.text()
        if "change" in path:
            body += s.page.locator("textarea").first.input_value() if s.page.locator("textarea").count() else ""
        assert XSS_SCRIPT in body or XSS_IMG in body, f"the literal text is not visible on {path}"
        assert s.page.locator("img[src=x]").count() == 0
        assert s.csp_violations == [], s.csp_violations


def test_bulk_pause_with_confirmation_page(session, alice, make_memory):
    from memoryboard.models import MemoryFlag

    items = [make_memory(alice, f"bulk item {i}") for i in range(3)]
    s = session().login(alice)
    s.goto("/me/memories/")
    for memory in items[:2]:
        s.page.check(f"li.mem[data-id='{memory.pk}'] input[name=ids]")
    s.page.select_option("#bulk-form select[name=action]", "pause")
    s.page.click("#bulk-form button[type=submit]")
    s.page.wait_for_load_state("load")
    assert "2" in s.page.locator(".bulk-count").inner_text()
    s.shot("my_memories_bulk_confirm")
    assert not MemoryFlag.objects.filter(paused=True).exists()
    s.page.click("#confirm-bulk")
    s.page.wait_for_load_state("load")
    assert set(MemoryFlag.objects.filter(paused=True).values_list("memory_id", flat=True)) == {
        items[0].pk, items[1].pk}
    assert s.page.locator("li.mem.mem-paused").count() == 2
    s.shot("my_memories_bulk_paused")


def test_context_window_viewer(session, developer, alice, make_memory):
    make_memory(alice, "alice writes Java backend services")
    _conversation(alice, 60, extra=["How do I tune my Java backend?"])
    s = session().login(developer)
    s.goto("/playground/?conversation=c1")
    viewer = s.page.locator("#context-window")
    assert viewer.get_attribute("data-agent") == "chat"
    assert viewer.get_attribute("data-memories") == "1"
    assert viewer.locator(".window-sides svg.token-bar rect.part-memory").count() == 2  # before and after
    # and by part after each strategy of the playground alone: Before, then one row per strategy
    assert viewer.locator("#window-each tbody tr").count() == 1 + s.page.locator(".pg-col[data-strategy]").count()
    viewer.scroll_into_view_if_needed()
    viewer.screenshot(path=str(_artifact("playground_context_window")), caret="initial")
    s.page.select_option("#context-window select[name=agent]", "coder")
    s.page.wait_for_function("() => document.querySelector('#context-window').dataset.agent === 'coder'")
    assert s.page.locator("#context-window").get_attribute("data-budget") == "8000"
    assert s.page.locator("#context-window .window-sides line.budget-line").count() == 2


def _artifact(name):
    from tests.browser.conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"


def test_playground_fits_a_1366_pixel_screen(browser, live_server, developer, alice):
    # COMPOSITE's "steps" and CLEAR_TOOL_RESULTS' "never clear these tools" used to stick out of their
    # columns and give the whole page a horizontal scroll bar on a common laptop width.
    _conversation(alice, 12)
    context = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 900})
    try:
        s = Session(context.new_page(), live_server.url).login(developer)
        s.goto("/playground/?conversation=c1")
        assert s.page.locator("#id_c-composite-steps").count() == 1
        widths = s.page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], widths
        for field in ("#id_c-composite-steps", "#id_c-clear_tool_results-exclude_tools"):
            inside = s.page.evaluate(
                "sel => { const f = document.querySelector(sel), c = f.closest('.pg-col');"
                " return f.getBoundingClientRect().right <= c.getBoundingClientRect().right + 0.5; }",
                field,
            )
            assert inside, field
        # CLEAR_TOOL_RESULTS's heading wraps after an underscore, not in the middle of a word
        heading = s.page.locator("#col-clear_tool_results h2")
        assert heading.inner_text().replace("\n", "") == "CLEAR_TOOL_RESULTS"
        assert "_<wbr>" in heading.inner_html() and "<wbr>" not in heading.inner_html().replace("_<wbr>", "")
    finally:
        context.close()
