"""Comparing strategies (issue 15, item 3): one budget for all, the configuration in the URL, one numbering,
honest notes; every figure is the strategy's own result object."""

from __future__ import annotations

import html as htmllib
import json
import re
from urllib.parse import parse_qs, urlparse

import pytest
from django.urls import reverse

from memoryboard import conversations
from memoryboard.models import ChatMessage, PlaygroundTrace
from memoryboard.strategies import CONTEXT_STRATEGIES
from memoryboard.web.playground.rows import parse_ids

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "system", "content": "You are helpful."}] + [
    {"role": "user" if i % 2 else "assistant", "content": f"turn {i}: " + "words " * (i * 7 % 40 + 3)}
    for i in range(1, 60)
]


def _paste(client, messages=MESSAGES) -> str:
    response = client.post(reverse("playground"), {"messages_json": json.dumps(messages)})
    assert response.status_code == 302
    return parse_qs(urlparse(response["Location"]).query)["trace"][0]


def _columns(page: str) -> dict[str, dict[str, str]]:
    out = {}
    for name, attrs in re.findall(r'<section class="pg-col" id="col-([a-z_]+)"(.*?)>', page, re.S):
        out[name.upper()] = {k: htmllib.unescape(v) for k, v in re.findall(r'data-([a-z-]+)="([^"]*)"', attrs)}
    return out


def test_same_budget_fits_every_strategy_and_ranks_them(login, developer):
    client = login(developer)
    trace = _paste(client)
    page = client.get(reverse("playground"), {"trace": trace, "mode": "budget", "budget": "600"}).content.decode()
    columns = _columns(page)
    assert set(CONTEXT_STRATEGIES) <= set(columns)
    for name in ("TRIM", "SUMMARIZE", "SLIDING_WINDOW", "COMPOSITE"):
        data = columns[name]
        assert float(data["tokens-after"]) <= 600 and data["meets-budget"] == "true", name
        # the column shows the strategy's own result for the parameters it was set to
        expected = conversations.context_apply(name, MESSAGES, json.loads(data["fit-params"]), keep_system=True).to_dict()
        assert parse_ids(data["kept"]) == expected["kept"] and float(data["tokens-after"]) == expected["tokens_after"]
    table = page[page.index('id="pg-summary"'):page.index('class="pg-columns"')]
    ranked = re.findall(r'<tr data-strategy="([A-Z_]+)" data-meets="(true|false)"', table)
    assert {name for name, _ in ranked} == set(CONTEXT_STRATEGIES)
    meets = [m == "true" for _, m in ranked]
    assert meets == sorted(meets, reverse=True)  # within the budget first
    within = [name for name, m in ranked if m == "true"]
    tokens = [float(columns[name]["tokens-after"]) for name in within]
    assert tokens == sorted(tokens, reverse=True)  # then most tokens kept
    assert "Every strategy at ≈ 600 tokens" in page


def test_the_configuration_is_the_url(login, developer, support_user):
    client = login(developer)
    trace = _paste(client)
    query = {"trace": trace, "mode": "own", "c-trim-keep_first": "1", "c-trim-keep_last": "4",
             "c-sliding_window-max_tokens": "300"}
    column = client.get(reverse("playground-context", args=["trim"]), query)
    pushed = column["HX-Push-Url"]
    assert pushed.startswith(reverse("playground") + "?")
    assert parse_qs(urlparse(pushed).query) == {k: [v] for k, v in query.items()}
    first = client.get(pushed).content.decode()  # a reload
    assert _columns(first)["TRIM"]["kept"] == "0-1,56-59"  # the system prompt kept aside, then 1 + 4
    assert _columns(first)["SLIDING_WINDOW"]["tokens-after"] == _columns(
        client.get(pushed).content.decode())["SLIDING_WINDOW"]["tokens-after"]
    # the same link, another person's session: the same view
    from django.test import Client

    other = Client()
    other.force_login(support_user)
    shared = other.get(pushed).content.decode()
    assert _columns(shared) == _columns(first)
    assert 'value="4"' in shared and 'name="c-trim-keep_last"' in shared


def test_pasting_the_same_trace_gives_the_same_link(login, developer):
    client = login(developer)
    assert _paste(client) == _paste(client)
    assert PlaygroundTrace.objects.count() == 1


def test_unknown_trace_is_404_and_end_users_get_403(login, developer, alice):
    assert login(developer).get(reverse("playground"), {"trace": "0" * 64}).status_code == 404
    trace = _paste(login(developer))
    assert login(alice).get(reverse("playground"), {"trace": trace}).status_code == 403


def test_bad_budget_names_the_field(login, developer):
    client = login(developer)
    page = client.get(reverse("playground"), {"trace": _paste(client), "mode": "budget", "budget": "lots"})
    assert page.status_code == 200 and "budget: enter a whole number of tokens." in page.content.decode()


def test_tokens_are_marked_estimated(login, developer):
    client = login(developer)
    page = client.get(reverse("playground"), {"trace": _paste(client)}).content.decode()
    assert "tokens (estimated)" in page and re.search(r"≈ [0-9,]+ tokens \(estimated\)", page)
    assert not re.search(r"\d+\.\d+ tokens", page)


def test_one_numbering_in_columns_plans_and_context_window(login, support_user, alice, make_conversation):
    rows = make_conversation(alice, 30)
    client = login(support_user)
    page = client.get(reverse("playground"), {"conversation": "c1", "c-trim-keep_first": "2", "keep_system": "0",
                                              "c-trim-keep_last": "3", "m-delete-keep_latest": "25"}).content.decode()
    trim = page[page.index('id="col-trim"'):page.index('id="col-summarize"')]
    shown = [int(i) for i in re.findall(r'<li class="msg msg-kept" data-index="(\d+)"', trim)]
    assert shown == [0, 1, 27, 28, 29]  # input positions, as in the API's kept list
    plan = page[page.index('id="plan-delete"'):]
    plan = plan[:plan.index("</section>")]
    deleted = re.findall(r'data-index="(\d+)" data-row-id="(\d+)"', plan)
    assert deleted == [(str(i), str(rows[i].pk)) for i in range(5)]
    window = page[page.index('id="context-window"'):page.index('id="memory"')]
    indexes = [int(i) for i in re.findall(r'data-index="(\d+)"', window)]
    assert indexes and set(indexes) <= set(range(30)) and 29 in indexes


def test_discarded_summary_is_said(login, developer):
    client = login(developer)
    query = {"trace": _paste(client), "c-composite-steps": "summarize, sliding_window",
             "c-composite-summarize.threshold": "5", "c-composite-summarize.keep_last": "3",
             "c-composite-sliding_window.max_tokens": "200",
             "c-composite-trim.keep_first": "2", "c-composite-trim.keep_last": "10",
             "c-composite-clear_tool_results.trigger_tokens": "4000", "c-composite-clear_tool_results.keep": "3"}
    column = client.get(reverse("playground-context", args=["composite"]), query).content.decode()
    data = _columns(column)["COMPOSITE"]
    assert int(data["llm-calls"]) == 1 and data["summarized"] == ""  # paid for, then dropped
    assert "SUMMARIZE made a summary (1 summary call) that SLIDING_WINDOW then dropped" in column
    # a window wide enough keeps the summary: no note
    query["c-composite-sliding_window.max_tokens"] = "100000"
    column = client.get(reverse("playground-context", args=["composite"]), query).content.decode()
    assert "then dropped" not in column


def test_applying_returns_to_the_view_it_was_confirmed_from(login, support_user, alice, make_conversation):
    rows = make_conversation(alice, 10)
    client = login(support_user)
    confirm = client.get(reverse("playground-memory-confirm", args=["delete"]),
                         {"conversation": "c1", "m-delete-keep_latest": "4", "mode": "budget"}).content.decode()
    back = htmllib.unescape(re.search(r'name="back" value="([^"]+)"', confirm).group(1))
    assert "m-delete-keep_latest=4" in back and "mode=budget" in back
    ids = re.search(r'name="expected_delete_ids" value="([^"]*)"', confirm).group(1)
    response = client.post(reverse("playground-memory-apply", args=["delete"]),
                           {"conversation": "c1", "params": json.dumps({"keep_latest": 4}),
                            "expected_delete_ids": ids, "back": back})
    assert response.status_code == 302 and response["Location"] == back
    assert ChatMessage.objects.filter(conversation_id="c1").count() == 4
    # a "back" elsewhere is ignored
    rows = make_conversation(alice, 10, conversation_id="c2")
    response = client.post(reverse("playground-memory-apply", args=["delete"]),
                           {"conversation": "c2", "params": json.dumps({"keep_latest": 4}),
                            "expected_delete_ids": ",".join(str(r.pk) for r in rows[:6]),
                            "back": "https://evil.example/playground/?x=1"})
    assert response["Location"].startswith("/playground/?conversation=c2")


def test_people_read_positions_from_1_while_the_data_keeps_the_input_position(login, support_user, alice,
                                                                              make_conversation):
    make_conversation(alice, 30)
    client = login(support_user)
    page = client.get(reverse("playground"), {"conversation": "c1", "c-trim-keep_first": "2", "keep_system": "0",
                                              "c-trim-keep_last": "3"}).content.decode()
    trim = page[page.index('id="col-trim"'):page.index('id="col-summarize"')]
    shown = re.findall(r'<li class="msg msg-kept" data-index="(\d+)">\s*<div class="msg-head">.*?'
                       r'<span class="idx">#(\d+)</span>', trim, re.S)
    assert shown == [("0", "1"), ("1", "2"), ("27", "28"), ("28", "29"), ("29", "30")]
    assert "#3–#27" in trim  # the dropped run, collapsed, as people count
    assert 'data-kept="0-1,27-29"' in trim  # the data attributes keep the API's input positions
    # A kept part that starts with a reply whose question was dropped names it as people count too.
    mid = client.get(reverse("playground"), {"conversation": "c1", "c-trim-keep_first": "0", "keep_system": "0",
                                             "c-trim-keep_last": "2"}).content.decode()
    assert "The kept part starts at #29, an assistant reply" in mid
    window = page[page.index('id="context-window"'):page.index('id="memory"')]
    assert re.search(r'data-index="29">\s*<div class="msg-head">[^\n]*\n[^\n]*<span class="idx">#30</span>', window)
    assert "<span class=\"idx\">#0</span>" not in page
