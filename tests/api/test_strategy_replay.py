"""POST /api/v1/strategies/replay: the replay's figures through the API, errors named by field."""

from __future__ import annotations

import pytest

from memoryboard.strategies.replay import Price, replay
from tests.api.helpers import error_of
from tests.strategies.helpers import replay_conversation

pytestmark = pytest.mark.django_db

CONVERSATION = replay_conversation()  # six calls; user texts 8 tokens, replies 12

STRATEGIES = [{"name": "trim", "params": {"keep_first": 1, "keep_last": 2}},
              {"name": "sliding_window", "params": {"max_tokens": 30}}]


def test_replay_answers_the_rows_and_totals_of_each_strategy(as_user, alice):
    response = as_user(alice).post(
        "/api/v1/strategies/replay",
        {"messages": CONVERSATION, "strategies": STRATEGIES,
         "price": {"input": 1.0, "cached_input": 0.1, "output": 2.0}},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["calls"] == 6
    trim, window = body["strategies"]
    assert [row["sent_tokens"] for row in trim["rows"]] == [16, 36, 36, 36, 36, 36]
    assert [row["cached_tokens"] for row in window["rows"]] == [0, 16, 8, 8, 8, 8]
    assert trim["totals"].items() >= {"calls": 6, "sent_tokens": 196, "cached_tokens": 80, "output_tokens": 60,
                                      "summary_calls": 0, "most_lost_turns": 5, "cost": trim["cost"]}.items()
    assert trim["cost"] == pytest.approx(244 / 1_000_000)
    expected = replay(CONVERSATION, [(s["name"], s["params"]) for s in STRATEGIES])
    assert body["strategies"] == [r.to_dict(Price(1.0, 0.1, 2.0)) for r in expected]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"strategies": STRATEGIES}, "messages"),
        ({"messages": "nope", "strategies": STRATEGIES}, "messages"),
        ({"messages": CONVERSATION, "strategies": []}, "strategies"),
        ({"messages": CONVERSATION}, "strategies"),
        ({"messages": CONVERSATION, "strategies": [{"name": "trim"}, {"params": {}}]}, "strategies[1].name"),
        ({"messages": CONVERSATION, "strategies": [{"name": "nope"}]}, "strategies[0].name"),
        ({"messages": CONVERSATION, "strategies": [{"name": "trim", "params": {"keep_last": -1}}]},
         "strategies[0].params.keep_last"),
        ({"messages": CONVERSATION, "strategies": STRATEGIES, "price": {"input": -1, "cached_input": 0,
                                                                          "output": 0}}, "price.input"),
        ({"messages": [{"role": "wizard", "content": "x"}], "strategies": STRATEGIES}, "messages[0].role"),
        ({"messages": CONVERSATION, "strategies": STRATEGIES, "user": "2"}, "user"),
        ({"messages": CONVERSATION, "strategies": STRATEGIES, "cache_model": "azure"}, "cache_model"),
        ({"messages": CONVERSATION, "strategies": STRATEGIES, "cache_model": "anthropic", "cache_ttl_seconds": 600},
         "cache_ttl_seconds"),
        ({"messages": CONVERSATION, "strategies": STRATEGIES, "cache_min_tokens": 0}, "cache_min_tokens"),
        ({"messages": CONVERSATION, "strategies": STRATEGIES, "seconds_between_calls": -1}, "seconds_between_calls"),
        ({"messages": CONVERSATION, "strategies": STRATEGIES, "price": {"input": 1, "cached_input": 0, "output": 0,
                                                                          "cache_write": -1}}, "price.cache_write"),
        ({"messages": CONVERSATION, "strategies": [{"name": "clear_tool_results", "params": {"preview_chars": -1}}]},
         "strategies[0].params.preview_chars"),
        ({"messages": CONVERSATION, "strategies": [{"name": "summarize", "params": {"trigger_combine": "most"}}]},
         "strategies[0].params.trigger_combine"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(as_user, alice, body, field):
    response = as_user(alice).post("/api/v1/strategies/replay", body, format="json")
    assert response.status_code == 400, response.content
    assert field in error_of(response)["fields"], error_of(response)


def test_replay_needs_a_signed_in_user(client):
    response = client.post("/api/v1/strategies/replay", {"messages": CONVERSATION, "strategies": STRATEGIES},
                           content_type="application/json")
    assert response.status_code in (401, 403)


def test_anthropic_cache_model_bills_writes_and_reads_and_summaries_count(as_user, alice):
    system = "S" * 4990  # 2,000 tokens: over Anthropic's 1,024-token minimum
    messages = [{"role": "system", "content": system}] + CONVERSATION[1:]
    response = as_user(alice).post("/api/v1/strategies/replay", {
        "messages": messages, "strategies": [{"name": "trim", "params": {"keep_first": 1, "keep_last": 2}},
                                             {"name": "summarize", "params": {"threshold": 4, "keep_last": 2}}],
        "cache_model": "anthropic", "seconds_between_calls": 10,
        "price": {"input": 1.0, "cached_input": 0.1, "output": 2.0}}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["cache_model"]["kind"] == "anthropic" and body["price"]["cache_write"] == 1.25
    trim, summary = body["strategies"]
    first, second = trim["rows"][:2]
    assert (first["cache_write_tokens"], first["cache_read_tokens"]) == (first["sent_tokens"], 0)
    assert second["cache_read_tokens"] == first["sent_tokens"]
    assert first["cost"] == pytest.approx((first["sent_tokens"] * 1.25 + first["output_tokens"] * 2) / 1e6)
    assert summary["summary_rows"] and all(row["kind"] == "summary" for row in summary["summary_rows"])
    rows_cost = sum(row["cost"] for row in summary["rows"] + summary["summary_rows"])
    assert summary["totals"]["cost"] == pytest.approx(rows_cost) and summary["totals"]["summary_cost"] > 0
