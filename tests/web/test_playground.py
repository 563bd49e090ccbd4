"""The playground renders the strategies' own result objects, for developers and support only."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import Resolver404, resolve, reverse
from django.utils.html import strip_tags

from memoryboard import conversations
from memoryboard.models import AuditLog, ChatMessage
from memoryboard.strategies import CONTEXT_STRATEGIES
from memoryboard.web.playground.rows import compact_ids, parse_ids

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "system", "content": "You are helpful."}] + [
    {"role": "user" if i % 2 else "assistant", "content": f"turn {i}: " + "words " * (i * 7 % 40 + 3)}
    for i in range(1, 30)
]


def _column(html: str, name: str) -> dict[str, str]:
    match = re.search(r'<section class="pg-col" id="col-%s"(.*?)>' % name.lower(), html, re.S)
    assert match, f"column {name} not rendered"
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', match.group(1)))


def _paste(client, messages) -> str:
    """Paste messages: the answer redirects to the trace's URL; returns the trace id."""
    response = client.post(reverse("playground"), {"messages_json": json.dumps(messages)})
    assert response.status_code == 302, response.content[:500]
    return response["Location"].split("trace=")[1]


def _ints(csv: str) -> list[int]:
    return parse_ids(csv)


def assert_column_matches(data: dict[str, str], expected: dict) -> None:
    """The numbers a column renders (data- attributes) equal the result object's API shape."""
    assert _ints(data["kept"]) == expected["kept"]
    assert _ints(data["dropped"]) == expected["dropped"]
    assert _ints(data["summarized"]) == expected["summarized"]
    assert float(data["tokens-before"]) == expected["tokens_before"]
    assert float(data["tokens-after"]) == expected["tokens_after"]
    assert int(data["llm-calls"]) == expected["llm_calls"]
    assert (data["fallback"] or None) == expected["fallback"]
    assert float(data["saved-ratio"]) == expected["saved_ratio"]


@pytest.mark.parametrize("fixture", ["developer", "support_user", "superuser"])
def test_staff_roles_open_the_playground(request, login, fixture):
    response = login(request.getfixturevalue(fixture)).get(reverse("playground"))
    assert response.status_code == 200
    assert b"pg-paste" in response.content


def test_end_users_get_403_everywhere(login, alice, make_conversation):
    make_conversation(alice)
    client = login(alice)
    assert client.get(reverse("playground")).status_code == 403
    assert client.get(reverse("playground-context", args=["trim"]), {"conversation": "c1"}).status_code == 403
    assert client.get(reverse("playground-memory-plan", args=["delete"]), {"conversation": "c1"}).status_code == 403
    assert client.get(reverse("playground-memory-confirm", args=["delete"]), {"conversation": "c1"}).status_code == 403
    assert client.post(reverse("playground-memory-apply", args=["delete"]),
                       {"conversation": "c1", "params": "{}", "expected_delete_ids": ""}).status_code == 403
    assert ChatMessage.objects.count() == 12


def test_anonymous_is_sent_to_login(client):
    response = client.get(reverse("playground"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_pasted_messages_render_every_column_with_the_results_numbers(login, developer):
    client = login(developer)
    trace = _paste(client, MESSAGES)
    response = client.get(reverse("playground"), {"trace": trace})
    assert response.status_code == 200
    html = response.content.decode()
    for name in CONTEXT_STRATEGIES:
        data = _column(html, name)
        # The playground keeps the system prompt aside by default, as the agent runtime does.
        assert_column_matches(data, conversations.context_apply(name, MESSAGES, None, keep_system=True).to_dict())
    # the trace is named in the configuration form, the input shown once in the shared Before column
    assert f'name="trace" value="{trace}"' in html and html.count("turn 29") >= 1
    assert html.count('id="col-before"') == 1


@pytest.mark.parametrize(
    "name,form,params",
    [
        ("TRIM", {"c-trim-keep_first": "2", "c-trim-keep_last": "3"}, {"keep_first": 2, "keep_last": 3}),
        ("SUMMARIZE", {"c-summarize-threshold": "5", "c-summarize-keep_last": "4"}, {"threshold": 5, "keep_last": 4}),
        ("SLIDING_WINDOW", {"c-sliding_window-max_tokens": "300"}, {"max_tokens": 300}),
        (
            "COMPOSITE",
            {"c-composite-steps": "trim, sliding_window", "c-composite-trim.keep_first": "1",
             "c-composite-trim.keep_last": "20", "c-composite-summarize.threshold": "20",
             "c-composite-summarize.keep_last": "6", "c-composite-sliding_window.max_tokens": "250"},
            {"steps": ["trim", "sliding_window"], "trim": {"keep_first": 1, "keep_last": 20},
             "summarize": {"threshold": 20, "keep_last": 6}, "sliding_window": {"max_tokens": 250}},
        ),
    ],
)
def test_column_numbers_equal_the_apis(login, developer, name, form, params):
    """The column endpoint and the API's result object agree for the same messages and parameters."""
    client = login(developer)
    response = client.get(reverse("playground-context", args=[name.lower()]), {"trace": _paste(client, MESSAGES), **form})
    assert response.status_code == 200
    data = _column(response.content.decode(), name)
    url = f"/api/v1/strategies/context/{name.lower()}/apply"
    try:
        resolve(url)
    except Resolver404:  # the API is not wired in this checkout: compare with the object it renders
        expected = conversations.context_apply(name, MESSAGES, params, keep_system=True).to_dict()
    else:
        api = client.post(url, {"messages": MESSAGES, "params": params, "keep_system": True},
                          content_type="application/json")
        assert api.status_code == 200, api.content
        expected = api.json()
    assert_column_matches(data, expected)


def test_column_is_marked_with_classes_and_text_labels(login, developer):
    client = login(developer)
    response = client.get(reverse("playground-context", args=["trim"]),
                          {"trace": _paste(client, MESSAGES), "c-trim-keep_first": "1", "c-trim-keep_last": "2"})
    html = response.content.decode()
    assert 'class="msg msg-kept"' in html and 'class="tag tag-kept">kept<' in html
    # 26 dropped messages in one run (the system prompt is kept aside, then 1 first + 2 last): collapsed
    assert 'class="msg-run msg-dropped"' in html and "26 messages" in html


@pytest.mark.parametrize(
    "name,form,needle",
    [
        ("sliding_window", {"c-sliding_window-max_tokens": "0"}, b'data-error="max_tokens:'),
        ("composite", {"c-composite-steps": "trim, explode"}, b"steps[1]"),
    ],
)
def test_bad_parameter_is_a_400_naming_the_field(login, developer, name, form, needle):
    client = login(developer)
    response = client.get(reverse("playground-context", args=[name]), {"trace": _paste(client, MESSAGES), **form})
    assert response.status_code == 400
    assert needle in response.content


@pytest.mark.parametrize(
    "payload,needle",
    [
        ("[{\"role\": \"user\", \"content\": \"hi\"", "JSON syntax error at line 1"),
        ('{"foo": 1}', "messages: expected a JSON list"),
        ("[]", "messages: the list is empty"),
        ('[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "user", "content": "c"},'
         ' {"role": "wizard", "content": "d"}]', "messages[3].role: unknown role"),
        ('[{"role": "user"}]', "messages[0].content: is required"),
    ],
)
def test_bad_json_is_a_clear_error_in_the_page(login, developer, payload, needle):
    response = login(developer).post(reverse("playground"), {"messages_json": payload})
    assert response.status_code == 400
    assert needle in response.content.decode().replace("&#x27;", "'").replace("&quot;", '"')


def test_uploaded_file_is_accepted(login, developer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("m.json", json.dumps({"messages": MESSAGES}).encode(), "application/json")
    response = login(developer).post(reverse("playground"), {"messages_file": upload}, follow=True)
    assert response.status_code == 200
    assert _column(response.content.decode(), "TRIM")["kept"]


def test_stored_conversation_renders_columns_and_memory_plans(login, developer, alice, make_conversation):
    make_conversation(alice, 30)
    response = login(developer).get(reverse("playground"), {"conversation": "c1"})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="col-sliding_window"' in html and 'id="plan-delete"' in html and 'id="plan-filter"' in html
    # developers see the dry run but get no apply button
    assert "playground/memory/delete/apply/" not in html


def test_unknown_conversation_is_404(login, developer):
    assert login(developer).get(reverse("playground"), {"conversation": "nope"}).status_code == 404


def test_memory_plan_endpoint_renders_the_plan(login, support_user, alice, make_conversation):
    rows = make_conversation(alice, 10)
    response = login(support_user).get(
        reverse("playground-memory-plan", args=["delete"]), {"conversation": "c1", "m-delete-keep_latest": "4"}
    )
    assert response.status_code == 200
    match = re.search(r'data-delete-ids="([^"]*)"', response.content.decode())
    assert _ints(match.group(1)) == [r.pk for r in rows[:6]]


def test_filter_rules_form(login, support_user, alice, make_conversation):
    rows = make_conversation(alice, 6, contents=["sys", "q1", "answer with keyword", "q2", "plain answer", "q3"])
    response = login(support_user).get(
        reverse("playground-memory-plan", args=["filter"]),
        {"conversation": "c1", "m-filter-keep_roles": ["SYSTEM", "USER"], "m-filter-assistant_keywords": "keyword",
         "m-filter-min_length": "0"},
    )
    match = re.search(r'data-delete-ids="([^"]*)"', response.content.decode())
    assert _ints(match.group(1)) == [rows[4].pk]


def test_staff_apply_with_confirmation_and_audit(login, support_user, alice, make_conversation):
    rows = make_conversation(alice, 8)
    client = login(support_user)
    page = client.get(reverse("playground"), {"conversation": "c1", "m-delete-keep_latest": "5"}).content.decode()
    link = re.search(r'href="(/playground/memory/delete/confirm/\?[^"]+)"', page).group(1).replace("&amp;", "&")
    assert "conversation=c1" in link and "m-delete-keep_latest=5" in link
    confirm = client.get(link).content.decode()
    # the confirmation states what will be deleted: how many, which roles, positions and row ids, the text
    assert "This deletes 3 of the conversation's 8 stored messages for good" in confirm
    assert "(1 assistant, 1 system, 1 user;" in confirm
    assert "positions 1-3" in confirm  # numbered for people from #1
    for position, row in enumerate(rows[:3]):
        assert f'data-index="{position}" data-row-id="{row.pk}"' in confirm and f"row {row.pk}" in confirm
    assert f'name="expected_delete_ids" value="{compact_ids([r.pk for r in rows[:3]])}"' in confirm
    expected = compact_ids([r.pk for r in rows[:3]])
    response = client.post(
        reverse("playground-memory-apply", args=["delete"]),
        {"conversation": "c1", "params": json.dumps({"keep_latest": 5}), "expected_delete_ids": expected},
        follow=True,
    )
    assert response.status_code == 200
    assert "DELETE applied: 3 messages deleted" in response.content.decode()
    assert list(ChatMessage.objects.values_list("pk", flat=True).order_by("pk")) == [r.pk for r in rows[3:]]
    assert AuditLog.objects.filter(action=AuditLog.Action.APPLY_STRATEGY, object_id="c1").count() == 1


def test_filter_default_keeps_assistant_replies(login, support_user, alice, make_conversation):
    make_conversation(alice, 8)
    html = login(support_user).get(reverse("playground"), {"conversation": "c1"}).content.decode()
    plan = re.search(r'<section class="pg-plan" id="plan-filter"(.*?)>', html, re.S).group(1)
    assert 'data-delete-ids=""' in plan  # nothing deleted unless the rules say so
    assert 'name="m-filter-keep_roles" value="ASSISTANT"' in html and re.search(
        r'value="ASSISTANT"[^>]*checked', html)


def test_stale_plan_changes_nothing(login, support_user, alice, make_conversation):
    rows = make_conversation(alice, 8)
    response = login(support_user).post(
        reverse("playground-memory-apply", args=["delete"]),
        {"conversation": "c1", "params": json.dumps({"keep_latest": 5}), "expected_delete_ids": str(rows[0].pk)},
        follow=True,
    )
    assert "The conversation changed since the plan was shown" in response.content.decode()
    assert ChatMessage.objects.count() == 8


def test_developer_cannot_apply(login, developer, alice, make_conversation):
    rows = make_conversation(alice, 8)
    response = login(developer).post(
        reverse("playground-memory-apply", args=["delete"]),
        {"conversation": "c1", "params": json.dumps({"keep_latest": 5}),
         "expected_delete_ids": ",".join(str(r.pk) for r in rows[:3])},
    )
    assert response.status_code == 403
    assert ChatMessage.objects.count() == 8


def test_apply_needs_csrf(support_user, alice, make_conversation):
    from django.test import Client

    make_conversation(alice, 8)
    client = Client(enforce_csrf_checks=True)
    client.force_login(support_user)
    response = client.post(reverse("playground-memory-apply", args=["delete"]),
                           {"conversation": "c1", "params": "{}", "expected_delete_ids": ""})
    assert response.status_code == 403
    assert ChatMessage.objects.count() == 8


def test_content_is_escaped(login, developer):
    evil = [{"role": "user", "content": "<script>alert(1)</script>"},
            {"role": "assistant", "content": "<img src=x onerror=alert(2)>"}]
    client = login(developer)
    html = client.get(reverse("playground"), {"trace": _paste(client, evil)}).content.decode()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_large_conversation_renders_compactly(login, developer):
    big = [{"role": "user" if i % 2 else "assistant", "content": f"m{i} " + "x" * 600} for i in range(2000)]
    client = login(developer)
    response = client.get(reverse("playground-context", args=["trim"]),
                          {"trace": _paste(client, big), "c-trim-keep_first": "2", "c-trim-keep_last": "10"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "1988 messages" in html
    assert html.count('class="msg ') < 120  # not 2000 rows
    assert "<details class=\"msg-content\">" in html  # long content behind a toggle


@pytest.mark.parametrize("ids,text", [([], ""), ([4], "4"), ([1, 2, 3, 7, 9, 10], "1-3,7,9-10")])
def test_id_ranges_round_trip(ids, text):
    assert compact_ids(ids) == text
    assert parse_ids(text) == ids


@pytest.mark.parametrize("text", ["a", "3-1", "1-x", "1-99999999"])
def test_bad_id_ranges_are_rejected(text):
    assert parse_ids(text) is None


def test_bad_expected_ids_are_a_400(login, support_user, alice, make_conversation):
    make_conversation(alice, 8)
    response = login(support_user).post(
        reverse("playground-memory-apply", args=["filter"]),
        {"conversation": "c1", "params": "{}", "expected_delete_ids": "x"},
    )
    assert response.status_code == 400
    assert ChatMessage.objects.count() == 8


def test_conversation_chooser_names_the_user(login, developer, bob_named, make_conversation):
    make_conversation(bob_named, conversation_id="bob-chat")
    html = login(developer).get(reverse("playground")).content.decode()
    option = re.search(r'<option value="bob-chat"[^>]*>([^<]*)</option>', html)
    assert option, "bob's conversation is not offered"
    assert f"Bob Builder ({bob_named.pk})" in option.group(1)


def test_confirmation_names_the_tool_calls_of_the_rows_it_deletes(login, support_user, superuser, alice):
    # A stored tool call has empty content: the confirmation showed an empty row instead of what is deleted.
    def row(role, content, metadata=None):
        return ChatMessage.objects.create(conversation_id="t1", agent_id="coder", user_id=str(alice.pk),
                                          role=role, content=content, metadata=metadata)

    rows = [
        row("USER", "how many orders changed?"),
        row("ASSISTANT", "", {"tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "run_sql", "arguments": "{}"}}]}),
        row("TOOL", '{"rows": 3}', {"tool_call_id": "call_1", "name": "run_sql"}),
        row("ASSISTANT", "three rows changed"),
        row("USER", "thanks"),
        row("ASSISTANT", "you are welcome"),
    ]
    confirm = login(support_user).get(
        reverse("playground-memory-confirm", args=["delete"]), {"conversation": "t1", "m-delete-keep_latest": "2"}
    ).content.decode()
    assert f'data-row-id="{rows[1].pk}"' in confirm
    call_row = confirm[confirm.index(f'data-row-id="{rows[1].pk}"'):confirm.index(f'data-row-id="{rows[2].pk}"')]
    assert "1 tool call" in call_row and "<code>run_sql</code>" in call_row
    result_row = confirm[confirm.index(f'data-row-id="{rows[2].pk}"'):confirm.index(f'data-row-id="{rows[3].pk}"')]
    # Support reads the tool's answer in words and no call id; developers read it as stored.
    assert "result of run_sql: rows: 3" in strip_tags(result_row) and "call_1" not in result_row
    as_developer = login(superuser).get(  # superusers are developers too (and may apply strategies)
        reverse("playground-memory-confirm", args=["delete"]), {"conversation": "t1", "m-delete-keep_latest": "2"}
    ).content.decode()
    assert "result of run_sql (call_1)" in as_developer and '{&quot;rows&quot;: 3}' in as_developer


def test_support_picks_a_conversation_by_what_it_is_developers_by_id(login, support_user, developer, alice,
                                                                      make_conversation):
    conversation = "7d2e4c1a-0b9f-4e6d-a3c5-1f8e2d7b6a90"
    make_conversation(alice, 4, conversation_id=conversation,
                      contents=["be brief", "Where do I renew my passport?", "At the city office.", "Thanks"])
    page = login(support_user).get(reverse("playground")).content.decode()
    option = re.search(r'<option value="%s"[^>]*>([^<]*)</option>' % conversation, page).group(1)
    assert conversation not in option
    assert "Chat assistant" in option and "alice" in option and "Where do I renew my passport?" in option
    assert "4 messages" in option
    loaded = login(support_user).get(reverse("playground"), {"conversation": conversation,
                                                             "m-delete-keep_latest": "2"}).content.decode()
    line = re.search(r'<p class="pg-source-line"><strong>(.*?)</strong>', loaded, re.S).group(1)
    assert conversation not in line and "Chat assistant" in line and "4 messages" in line
    link = re.search(r'href="(/playground/memory/delete/confirm/\?[^"]+)"', loaded).group(1).replace("&amp;", "&")
    heading = re.search(r"<h1>(.*?)</h1>", login(support_user).get(link).content.decode(), re.S).group(1)
    assert conversation not in heading and "Chat assistant" in heading

    page = login(developer).get(reverse("playground")).content.decode()
    option = re.search(r'<option value="%s"[^>]*>([^<]*)</option>' % conversation, page).group(1)
    assert option.startswith(f"{conversation} · chat · ")
