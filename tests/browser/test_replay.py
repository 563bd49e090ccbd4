"""A developer replays an agent trace call by call under every strategy, priced as the provider bills it:
the model's prices and cache follow the model at once, switching the cache model moves the badge when
the cheapest changes, and a short link opens the same figures for a colleague. Screenshots at 1366 px
under tests/artifacts/."""

from __future__ import annotations

import json
from urllib.parse import urlparse

import pytest

from benchmarks.replay import agent_trace
from memoryboard.models import PlaygroundTrace
from memoryboard.strategies import CONTEXT_STRATEGIES
from memoryboard.strategies.prompt_cache import CacheModel
from memoryboard.strategies.replay import Price, replay

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SONNET = Price(3.0, 0.3, 15.0)


def _figures(page) -> list[list[str]]:
    return page.locator(".rp-totals tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.strategy, ...[...r.cells].map(c => c.innerText.trim())])")


def _badge(page) -> str:
    return page.locator(".rp-totals tr.rp-cheapest").get_attribute("data-strategy")


def _cheapest(messages, cache: CacheModel) -> str:
    results = replay(messages, [(name, {}) for name in CONTEXT_STRATEGIES], cache=cache)
    return min(results, key=lambda r: r.cost(SONNET)).name


def _replay(session):
    page = session.page
    with page.expect_response(lambda r: "/playground/replay/" in r.url):
        page.click("#rp-config button[type=submit]")
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")


def test_developer_prices_the_replay_as_billed_and_shares_a_short_link(session, developer, support_user):
    messages = agent_trace(20)
    trace = PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(messages), messages=messages,
                                           created_by=developer)
    s = session().login(developer)
    s.page.set_viewport_size({"width": 1366, "height": 900})
    s.goto(f"/playground/?trace={trace.pk}")
    s.page.click("#pg-replay-link")
    s.page.wait_for_load_state("load")
    assert "/playground/replay/" in s.page.url
    # Every strategy is ticked and replayed on the first view.
    assert s.page.locator("input[name=strategy]:checked").count() == 5
    assert [row[0] for row in _figures(s.page)] == list(CONTEXT_STRATEGIES)

    # Choosing a model shows its prices and cache at once, before anything is replayed.
    s.page.select_option("select[name=model]", "claude-sonnet-4")
    assert s.page.get_attribute("input[name=price_input]", "placeholder") == "3"
    assert s.page.get_attribute("input[name=price_output]", "placeholder") == "15"
    assert s.page.get_attribute("input[name=price_write]", "placeholder") == "3.75"
    assert "Anthropic" in s.page.locator("select[name=cache_model] option[value='']").inner_text()
    s.page.fill("input[name=cache_ttl]", "3600")
    s.page.locator("input[name=cache_ttl]").dispatch_event("change")
    assert s.page.get_attribute("input[name=price_write]", "placeholder") == "6"
    s.page.fill("input[name=cache_ttl]", "")
    # Calls ten minutes apart: Anthropic's 5-minute cache is gone before every call.
    s.page.fill("input[name=call_gap]", "600")
    _replay(s)
    anthropic = CacheModel("anthropic", seconds_between_calls=600)
    expected = _cheapest(messages, anthropic)
    assert _badge(s.page) == expected
    # The ideal cache keeps everything: another strategy is cheapest, and the badge moves to it.
    s.page.select_option("select[name=cache_model]", "ideal")
    _replay(s)
    ideal = _cheapest(messages, CacheModel("ideal"))
    assert ideal != expected and _badge(s.page) == ideal
    assert "Cache model: ideal" in s.text()
    figures = _figures(s.page)
    results = replay(messages, [(name, {}) for name in CONTEXT_STRATEGIES], cache=CacheModel("ideal"))
    for row, result in zip(figures, results):
        assert row[2].replace(",", "") == str(result.totals["sent_tokens"])
        assert row[8] == f"${result.cost(SONNET):.4f}"
    ranks = s.page.locator(".rp-totals td.rp-rank").all_inner_texts()  # the same-budget ranking beside it
    assert sorted(text.split(" ")[0] for text in ranks) == ["#1", "#2", "#3", "#4", "#5"]
    s.page.screenshot(path=str(_artifact("replay_top")), caret="initial")
    s.shot("replay_full")
    assert not s.csp_violations

    # A short link for a colleague.
    long_url = s.page.url
    s.page.click("#rp-share-button")
    s.page.wait_for_load_state("load")
    short = urlparse(s.page.url).path
    assert short.startswith("/playground/replay/s/") and len(short) < 40 < len(long_url)
    assert _figures(s.page) == figures
    exported = json.loads(s.page.request.get(long_url + "&export=json").text())
    assert [r["totals"]["cost"] for r in exported["strategies"]] == [round(r.cost(SONNET), 9) for r in results]

    other = session().login(support_user)
    other.page.set_viewport_size({"width": 1366, "height": 900})
    other.goto(short)
    assert _figures(other.page) == figures and _badge(other.page) == ideal
    assert other.page.input_value("#rp-short-link").endswith(short)
    other.shot("replay_shared_link")


def _artifact(name):
    from tests.browser.conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
