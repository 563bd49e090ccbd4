"""Strategy endpoints: context apply (anyone signed in), memory plan/apply (staff), the listing."""

from __future__ import annotations

import pytest

from memoryboard.models import AuditLog, ChatMessage
from memoryboard.strategies import apply_context
from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db

TEN = [{"role": "user" if i % 2 else "assistant", "content": str(i)} for i in range(1, 11)]


@pytest.mark.parametrize("name", ["trim", "TRIM", "Trim"])
def test_context_apply_trim_is_exactly_the_result_object(as_user, alice, name):
    response = as_user(alice).post(
        f"/api/v1/strategies/context/{name}/apply",
        {"messages": TEN, "params": {"keep_first": 2, "keep_last": 3}},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert [m["content"] for m in body["messages"]] == ["1", "2", "8", "9", "10"]
    assert body == apply_context("trim", TEN, {"keep_first": 2, "keep_last": 3}).to_dict()
    assert body["kept"] == [0, 1, 7, 8, 9] and body["dropped"] == [2, 3, 4, 5, 6] and body["fallback"] is None


def test_context_apply_roles_any_case_and_trailing_slash(as_user, alice):
    messages = [{"role": "USER", "content": "a" * 500}, {"role": "Assistant", "content": "b" * 10}]
    response = as_user(alice).post(
        "/api/v1/strategies/context/sliding_window/apply/", {"messages": messages, "params": {"max_tokens": 20}},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["kept"] == [1]


def test_context_apply_summarize_offline_and_long_content(as_user, alice):
    messages = [{"role": "user", "content": "长" * 60_000}] + TEN * 3
    response = as_user(alice).post(
        "/api/v1/strategies/context/summarize/apply", {"messages": messages, "params": {"threshold": 5, "keep_last": 2}},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["messages"][0]["role"].upper() == "SYSTEM" and len(body["messages"]) == 3


def test_context_apply_defaults_and_llm_fallback(as_user, alice, openai_settings):
    openai_settings.push_fault("http500")
    messages = TEN * 3
    response = as_user(alice).post("/api/v1/strategies/context/summarize/apply", {"messages": messages}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["fallback"] and [m["content"] for m in body["messages"]] == ["1", "2", "3"]


@pytest.mark.parametrize(
    "body,field",
    [
        ({"messages": TEN, "params": {"keep_first": -1}}, "params.keep_first"),
        ({"messages": TEN, "params": {"keep_first": 10**30}}, "keep_first"),
        ({"messages": TEN, "params": {"keep_first": "2"}}, "keep_first"),
        ({"messages": TEN, "params": {"keep_middle": 2}}, "keep_middle"),
        ({"messages": TEN + [{"content": "no role"}]}, "messages[10].role"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user"}]}, "messages[0].content"),
        ({"messages": "hello"}, "messages"),
        ({"params": {}}, "messages"),
        ({"messages": TEN, "params": [1, 2]}, "params"),
    ],
)
def test_context_apply_bad_input_names_the_field(as_user, alice, body, field):
    response = as_user(alice).post("/api/v1/strategies/context/trim/apply", body, format="json")
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert any(key == field or key.endswith(field) for key in error["fields"]), error


def test_unknown_strategy_is_400(as_user, alice):
    response = as_user(alice).post("/api/v1/strategies/context/magic/apply", {"messages": TEN}, format="json")
    assert response.status_code == 400
    assert "name" in error_of(response)["fields"]


def test_context_apply_needs_sign_in(api):
    response = api.post("/api/v1/strategies/context/trim/apply", {"messages": TEN}, format="json")
    assert response.status_code == 401
    error_of(response)


def test_strategy_listing(as_user, alice):
    body = as_user(alice).get("/api/v1/strategies/").json()
    assert [s["name"] for s in body["context"]] == ["TRIM", "SUMMARIZE", "SLIDING_WINDOW", "CLEAR_TOOL_RESULTS", "COMPOSITE"]
    assert [s["name"] for s in body["memory"]] == ["TRIM", "SUMMARIZE", "DELETE", "FILTER"]
    trim = body["context"][0]
    assert [p["name"] for p in trim["params"]] == ["keep_first", "keep_last"]


def test_memory_plan_writes_nothing(as_user, developer, conversation):
    before = list(ChatMessage.objects.values_list("id", "content"))
    response = as_user(developer).post(
        "/api/v1/strategies/memory/delete/plan", {"conversation_id": conversation, "params": {"keep_latest": 5}},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert len(response.json()["delete_ids"]) == 3
    assert list(ChatMessage.objects.values_list("id", "content")) == before


def test_memory_apply_by_staff_is_audited(as_user, superuser, conversation):
    client = as_user(superuser)
    plan = client.post(
        "/api/v1/strategies/memory/DELETE/plan", {"conversation_id": conversation, "params": {"keep_latest": 5}},
        format="json",
    ).json()
    response = client.post(
        "/api/v1/strategies/memory/delete/apply",
        {"conversation_id": conversation, "params": {"keep_latest": 5}, "expected_delete_ids": plan["delete_ids"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert [m.content for m in ChatMessage.objects.order_by("id")] == [f"alice message {i}" for i in range(4, 9)]
    assert AuditLog.objects.filter(action=AuditLog.Action.APPLY_STRATEGY, object_id=conversation).exists()


def test_memory_apply_stale_plan_is_409(as_user, superuser, conversation):
    response = as_user(superuser).post(
        "/api/v1/strategies/memory/delete/apply",
        {"conversation_id": conversation, "params": {"keep_latest": 5}, "expected_delete_ids": [1]},
        format="json",
    )
    assert response.status_code == 409
    assert error_of(response)["code"] == "stale_plan"
    assert ChatMessage.objects.count() == 8


@pytest.mark.parametrize("kind", ["plan", "apply"])
def test_memory_strategy_unknown_conversation_is_404(as_user, superuser, kind):
    response = as_user(superuser).post(
        f"/api/v1/strategies/memory/delete/{kind}", {"conversation_id": "nope"}, format="json"
    )
    assert response.status_code == 404
    assert "conversation_id" in error_of(response)["fields"]


@pytest.mark.parametrize(
    "body,field",
    [({"conversation_id": "c", "params": {"keep_latest": -2}}, "params.keep_latest"),
     ({"params": {}}, "conversation_id"),
     ({"conversation_id": "c", "expected_delete_ids": ["x"]}, "expected_delete_ids")],
)
def test_memory_strategy_bad_input(as_user, superuser, make_conversation, body, field):
    make_conversation(superuser, 3, conversation_id="c")
    response = as_user(superuser).post("/api/v1/strategies/memory/delete/apply", body, format="json")
    assert response.status_code == 400, response.content
    assert any(key.startswith(field) for key in error_of(response)["fields"])
    assert ChatMessage.objects.count() == 3


def test_memory_strategy_roles(as_user, alice, developer, support_user, conversation):
    body = {"conversation_id": conversation, "params": {"keep_latest": 1}}
    assert as_user(alice).post("/api/v1/strategies/memory/delete/plan", body, format="json").status_code == 403
    assert as_user(alice).post("/api/v1/strategies/memory/delete/apply", body, format="json").status_code == 403
    assert as_user(developer).post("/api/v1/strategies/memory/delete/apply", body, format="json").status_code == 403
    # support staff (is_staff) may apply
    assert as_user(support_user).post("/api/v1/strategies/memory/delete/apply", body, format="json").status_code == 200
    assert ChatMessage.objects.count() == 1
