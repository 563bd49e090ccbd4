"""A developer replays an agent trace call by call, finds the cheapest strategy, and shares the link: the
colleague sees the same figures and charts. Screenshots at 1366 px under tests/artifacts/."""

from __future__ import annotations

import json
from urllib.parse import urlparse

import pytest

from benchmarks.replay import agent_trace
from memoryboard.models import PlaygroundTrace
from memoryboard.strategies.replay import Price, replay

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _figures(page) -> list[list[str]]:
    return page.locator(".rp-totals tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.strategy, ...[...r.cells].map(c => c.innerText.trim())])")


def test_developer_replays_finds_the_cheapest_and_shares_it(session, developer, support_user):
    messages = agent_trace(20)
    trace = PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(messages), messages=messages,
                                           created_by=developer)
    s = session().login(developer)
    s.page.set_viewport_size({"width": 1366, "height": 900})
    s.goto(f"/playground/?trace={trace.pk}")
    s.page.click("#pg-replay-link")
    s.page.wait_for_load_state("load")
    assert "/playground/replay/" in s.page.url
    # Compare TRIM too, with the developer's own prices.
    s.page.check("input[name=strategy][value=TRIM]")
    s.page.fill("input[name=price_input]", "2")
    s.page.fill("input[name=price_cached]", "0.5")
    s.page.fill("input[name=price_output]", "8")
    s.page.click("#rp-config button[type=submit]")
    s.page.wait_for_function("() => document.querySelectorAll('.rp-totals tbody tr').length === 4")
    s.page.wait_for_load_state("networkidle")
    figures = _figures(s.page)
    assert [row[0] for row in figures] == ["TRIM", "SLIDING_WINDOW", "CLEAR_TOOL_RESULTS", "COMPOSITE"]
    expected = replay(messages, [(name, {}) for name in ("TRIM", "SLIDING_WINDOW", "CLEAR_TOOL_RESULTS", "COMPOSITE")])
    price = Price(2, 0.5, 8)
    cheapest = min(expected, key=lambda r: r.cost(price)).name
    assert [row[0] for row in figures if "cheapest" in row[1]] == [cheapest]
    for row, result in zip(figures, expected):
        assert row[2].replace(",", "") == str(result.totals["sent_tokens"])
    assert s.page.locator(".rp-col").count() == 4 and s.page.locator(".rp-chart rect.cached").count() > 0
    assert s.page.locator("details.rp-params summary", has_text="TRIM").count() == 1  # its settings appear
    box = s.page.locator(".rp-col").first.bounding_box()
    assert box["width"] >= 380, "three columns side by side at 1366 px, each wide enough to read"
    s.page.screenshot(path=str(_artifact("replay_top")), caret="initial")
    s.shot("replay_full")
    assert not s.csp_violations
    shared = s.page.url
    exported = json.loads(s.page.request.get(shared + "&export=json").text())
    assert [r["totals"]["sent_tokens"] for r in exported["strategies"]] == [r.totals["sent_tokens"] for r in expected]

    other = session().login(support_user)  # a colleague opens the link
    other.page.set_viewport_size({"width": 1366, "height": 900})
    other.goto(urlparse(shared).path + "?" + urlparse(shared).query)
    assert _figures(other.page) == figures
    other.shot("replay_shared_link")


def _artifact(name):
    from tests.browser.conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
