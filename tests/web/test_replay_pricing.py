"""The replay page prices strategies as providers bill them: every strategy by default, summary calls in
the cost, the provider's cache, the same-budget ranking beside it, short links, Chinese numbers, contrast."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from benchmarks.replay import agent_trace
from memoryboard.ltm.people.user_data import user_data_erase
from memoryboard.models import ChatMessage, PlaygroundTrace, ReplayShare
from memoryboard.strategies import CONTEXT_STRATEGIES
from memoryboard.strategies.prompt_cache import CacheModel
from memoryboard.strategies.replay import Price, replay

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = agent_trace(20)  # 40 calls, a tool round per question


@pytest.fixture
def trace(developer):
    return PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(MESSAGES), messages=MESSAGES, created_by=developer)


def _totals(html: str) -> dict[str, str]:
    rows = re.findall(r'<tr data-strategy="(\w+)" data-cost="([\d.]+)"', html)
    return dict(rows)


def test_every_strategy_is_replayed_by_default_and_the_badge_goes_to_the_lowest_total(client, developer, trace):
    client.force_login(developer)
    response = client.get(f"/playground/replay/?trace={trace.pk}&model=claude-sonnet-4")
    assert response.status_code == 200
    html = response.content.decode()
    costs = _totals(html)
    assert list(costs) == list(CONTEXT_STRATEGIES)
    assert html.count('name="strategy" value=') == 5 and html.count('" checked>') >= 5
    expected = replay(MESSAGES, [(name, {}) for name in CONTEXT_STRATEGIES], cache=CacheModel("anthropic"))
    price = Price(3.0, 0.3, 15.0)
    for result in expected:
        assert float(costs[result.name]) == pytest.approx(result.cost(price), abs=1e-8)
    summarizing = next(r for r in expected if r.name == "SUMMARIZE")
    assert summarizing.summaries and summarizing.cost(price) > sum(c.cost(price, summarizing.cache) for c in summarizing.calls)
    cheapest = min(expected, key=lambda r: r.cost(price)).name
    badge = re.search(r'<tr data-strategy="(\w+)"[^>]*class="rp-cheapest"', html).group(1)
    assert badge == cheapest
    assert 'class="rp-summary-call"' in html  # the summary calls are rows of their own
    ranks = re.findall(r'<td class="rp-rank">#(\d)', html)  # the same-budget ranking beside each strategy
    assert sorted(ranks) == ["1", "2", "3", "4", "5"]


def test_the_cache_model_follows_the_model_and_changes_the_figures(client, developer, trace):
    client.force_login(developer)
    base = f"/playground/replay/?trace={trace.pk}&strategy=TRIM&export=json"
    openai = json.loads(client.get(base + "&model=gpt-4.1").content)
    anthropic = json.loads(client.get(base + "&model=claude-sonnet-4").content)
    ideal = json.loads(client.get(base + "&model=claude-sonnet-4&cache_model=ideal").content)
    assert (openai["cache_model"]["kind"], anthropic["cache_model"]["kind"], ideal["cache_model"]["kind"]) == (
        "openai", "anthropic", "ideal")
    assert anthropic["price"]["cache_write"] == pytest.approx(3.75)
    rows = anthropic["strategies"][0]["rows"]
    assert rows[0]["cache_write_tokens"] == 0  # the first call is under Anthropic's 1,024-token minimum
    assert any(r["cache_write_tokens"] for r in rows) and any(r["cache_read_tokens"] for r in rows)
    assert ideal["strategies"][0]["totals"]["cache_write_tokens"] == 0
    assert all(r["cache_read_tokens"] == 0 or (r["cache_read_tokens"] >= 1024 and r["cache_read_tokens"] % 128 == 0)
               for r in openai["strategies"][0]["rows"])
    hour = json.loads(client.get(base + "&model=claude-sonnet-4&cache_ttl=3600").content)
    assert hour["price"]["cache_write"] == pytest.approx(6.0)
    csv_rows = list(csv.DictReader(io.StringIO(client.get(
        f"/playground/replay/?trace={trace.pk}&strategy=SUMMARIZE&export=csv").content.decode())))
    assert {"agent", "summary"} == {row["kind"] for row in csv_rows} and all(row["cost"] for row in csv_rows)


def test_a_short_link_opens_the_same_figures_for_a_colleague(client, developer, support_user, alice, trace):
    client.force_login(developer)
    long_query = (f"trace={trace.pk}&strategy=TRIM&strategy=SUMMARIZE&model=claude-sonnet-4&price_input=2.5"
                  f"&cache_ttl=3600&c-trim-keep_first=1&c-trim-keep_last=4")
    long_page = client.get("/playground/replay/?" + long_query).content.decode()
    response = client.post("/playground/replay/share/", {"query": long_query})
    assert response.status_code == 302
    short = response["Location"]
    assert re.fullmatch(r"/playground/replay/s/[\w-]{12}/", short) and len(short) < 40
    assert client.post("/playground/replay/share/", {"query": long_query})["Location"] == short  # same config, same link
    share = ReplayShare.objects.get()
    assert share.trace_id == trace.pk and share.created_by == developer
    client.force_login(support_user)  # a colleague
    page = client.get(short)
    assert page.status_code == 200
    html = page.content.decode()
    assert _totals(html) == _totals(long_page) and len(_totals(html)) == 2
    assert short in html  # the page shows its short link
    assert client.get("/playground/replay/s/nope/").status_code == 404
    client.force_login(alice)  # an end user: as for the long link
    assert client.get(short).status_code in (302, 403)
    assert client.post("/playground/replay/share/", {"query": long_query}).status_code in (302, 403)
    client.force_login(developer)
    assert client.post("/playground/replay/share/", {"query": "strategy=TRIM"}).status_code == 400


def test_an_erase_removes_the_short_links_of_the_persons_conversations(client, developer, alice):
    ChatMessage.objects.create(conversation_id="conv-a", agent_id="chat", user_id=str(alice.pk), role="USER",
                               content="hello there")
    client.force_login(developer)
    client.post("/playground/replay/share/", {"query": "conversation=conv-a&strategy=TRIM"})
    assert ReplayShare.objects.filter(conversation_id="conv-a").exists()
    user_data_erase(user_id=str(alice.pk), actor=alice)
    assert not ReplayShare.objects.exists()


def test_chinese_figures_have_thousands_separators(client, developer, trace):
    client.force_login(developer)
    html = client.get(f"/playground/replay/?trace={trace.pk}&strategy=TRIM&cache_model=ideal",
                      HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    (sent,) = [r for r in replay(MESSAGES, [("TRIM", {})])]
    figure = f"{sent.totals['sent_tokens']:,}"
    assert sent.totals["sent_tokens"] >= 10_000 and f"<td>{figure}</td>" in html
    assert "white-space:nowrap" in (ROOT / "static/memoryboard/playground.css").read_text()


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_the_strip_colours_meet_wcag_aa_against_its_background():
    css = (ROOT / "static/memoryboard/playground.css").read_text()
    background = re.search(r"\.rp-chart, \.rp-strip \{[^}]*background:(#[0-9a-f]{6})", css).group(1)
    for status in ("kept", "dropped", "summarized", "cleared"):
        fill = re.search(rf"\.rp-strip \.{status} \{{ fill:(#[0-9a-f]{{6}}); }}", css).group(1)
        light, dark = sorted((_luminance(background), _luminance(fill)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 3.0, status
