"""The playground's replay page: the same figures as the strategy module, charts, exports, access."""

from __future__ import annotations

import csv
import io
import json

import pytest

from memoryboard.models import PlaygroundTrace
from memoryboard.strategies.replay import replay
from tests.strategies.helpers import replay_conversation

pytestmark = pytest.mark.django_db

MESSAGES = replay_conversation()  # six calls; user texts 8 tokens, replies 12


@pytest.fixture
def trace(developer):
    return PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(MESSAGES), messages=MESSAGES, created_by=developer)


def _url(trace, extra=""):
    return f"/playground/replay/?trace={trace.pk}&strategy=TRIM&strategy=SLIDING_WINDOW" \
           f"&c-trim-keep_first=1&c-trim-keep_last=2&c-sliding_window-max_tokens=30{extra}"


def test_the_page_shows_each_strategys_totals_chart_and_strip(client, developer, trace):
    client.force_login(developer)
    response = client.get(_url(trace, "&cache_model=ideal"))
    assert response.status_code == 200
    html = response.content.decode()
    expected = {r.name: r.totals for r in replay(MESSAGES, [("TRIM", {"keep_first": 1, "keep_last": 2}),
                                                             ("SLIDING_WINDOW", {"max_tokens": 30})])}
    assert expected["TRIM"]["sent_tokens"] == 196 and expected["SLIDING_WINDOW"]["cached_tokens"] == 48
    assert 'data-strategy="TRIM"' in html and "196" in html and "48" in html
    assert html.count('class="rp-chart"') == 2 and html.count('<rect class="sent"') == 12
    assert '<rect class="dropped"' in html  # the strip shows where TRIM forgets
    assert "6 model calls" in html


def test_exports_carry_the_same_rows(client, developer, trace):
    client.force_login(developer)
    data = json.loads(client.get(_url(trace, "&export=json")).content)
    assert [s["totals"]["sent_tokens"] for s in data["strategies"]] == [196, 196]
    assert data["strategies"][0]["cost"] > 0
    rows = list(csv.DictReader(io.StringIO(client.get(_url(trace, "&export=csv")).content.decode())))
    assert len(rows) == 12 and rows[0]["strategy"] == "TRIM" and rows[2]["dropped"] == "2"


def test_prices_in_the_url_change_the_cost_and_bad_ones_are_named(client, developer, trace):
    client.force_login(developer)
    prices = "&price_input=1&price_cached=0.1&price_output=2"
    # gpt-4o-mini's cache is OpenAI's: these 36-token prompts are under 1,024 tokens, so nothing is cached.
    data = json.loads(client.get(_url(trace, prices + "&export=json")).content)
    assert data["cache_model"]["kind"] == "openai"
    assert data["strategies"][0]["cost"] == pytest.approx((196 * 1 + 60 * 2) / 1_000_000)
    ideal = json.loads(client.get(_url(trace, prices + "&cache_model=ideal&export=json")).content)
    assert ideal["strategies"][0]["cost"] == pytest.approx(244 / 1_000_000)
    response = client.get(_url(trace, "&price_input=abc"))
    assert response.status_code == 400 and "price_input" in response.content.decode()
    for extra, field in (("&cache_model=azure", "cache_model"), ("&cache_model=anthropic&cache_ttl=600", "cache_ttl"),
                         ("&call_gap=-3", "call_gap"), ("&cache_min_tokens=x", "cache_min_tokens"),
                         ("&price_write=-1", "price_write")):
        response = client.get(_url(trace, extra))
        assert response.status_code == 400 and f"{field}:" in response.content.decode(), extra


def test_bad_parameters_are_named(client, developer, trace):
    client.force_login(developer)
    html = client.get(_url(trace, "&c-trim-keep_last=-4")).content.decode()
    assert "TRIM: keep_last" in html and "rp-chart" in html  # the other strategy still runs


def test_end_users_cannot_replay(client, alice, trace):
    client.force_login(alice)
    assert client.get(_url(trace)).status_code in (302, 403)


def test_a_column_says_why_and_shows_every_dropped_message_on_request(client, developer):
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(30)]
    trace = PlaygroundTrace.objects.create(pk=PlaygroundTrace.digest(messages), messages=messages,
                                           created_by=developer)
    client.force_login(developer)
    url = f"/playground/context/trim/?trace={trace.pk}&c-trim-keep_first=1&c-trim-keep_last=1"
    html = client.get(url).content.decode()
    assert "outside keep_first / keep_last" in html
    assert "show them all" in html and html.count('class="msg msg-dropped"') == 10
    html = client.get(url + "&all=1").content.decode()
    assert html.count('class="msg msg-dropped"') == 28 and "show them all" not in html
