"""The playground's pasted JSON goes through the one JSON guard, the apply view answers a 503 page when the
database fails, and expected ids are bounded in total (issue 12)."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError
from django.urls import reverse

from memoryboard import conversations
from memoryboard.models import ChatMessage
from memoryboard.web.playground.rows import MAX_PARSED_IDS, compact_ids, parse_ids

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("text,named", [
    ("[" * 1200 + "]" * 1200, "messages[0]"),
    ('[{"role": "user", "content": "a \\ud800"}]', "messages[0].content"),
    ('{"messages": [{"role": "user", "content": "x", "n": Infinity}]}', "messages[0].n"),
    ('[{"role": "user", "content": "x", "n": 1e400}]', "messages[0].n"),
])
def test_pasted_json_is_a_form_error_naming_the_field(login, developer, text, named):
    client = login(developer)
    page = client.post(reverse("playground"), {"messages_json": text})
    assert page.status_code == 400 and named in page.content.decode()
    # (columns read a stored trace, never pasted JSON: the page's form is the only way in)


def test_apply_refuses_params_that_are_not_finite(login, support_user, alice, make_conversation):
    make_conversation(alice, 8)
    response = login(support_user).post(
        reverse("playground-memory-apply", args=["delete"]),
        {"conversation": "c1", "params": '{"keep_latest": Infinity}', "expected_delete_ids": ""},
    )
    assert response.status_code == 400 and "params.keep_latest" in response.content.decode()
    assert ChatMessage.objects.count() == 8
    hostile = login(support_user).post(
        reverse("playground-memory-apply", args=["delete"]),
        {"conversation": "c1", "params": '{"<script>x</script>": NaN}', "expected_delete_ids": ""},
    )
    assert hostile.status_code == 400 and hostile["Content-Type"].startswith("text/plain")


def test_apply_answers_a_503_page_when_the_database_fails(login, support_user, alice, make_conversation, monkeypatch):
    rows = make_conversation(alice, 8)

    def timeout(*args, **kwargs):
        raise OperationalError(1205, "Lock wait timeout exceeded")

    monkeypatch.setattr(conversations, "memory_apply", timeout)
    response = login(support_user).post(
        reverse("playground-memory-apply", args=["delete"]),
        {"conversation": "c1", "params": json.dumps({"keep_latest": 5}),
         "expected_delete_ids": compact_ids([r.pk for r in rows[:3]])},
    )
    assert response.status_code == 503
    assert "nothing was changed" in response.content.decode()
    assert ChatMessage.objects.count() == 8


def test_parse_ids_bounds_the_total_not_only_each_range():
    assert parse_ids(f"1-{MAX_PARSED_IDS}") == list(range(1, MAX_PARSED_IDS + 1))
    assert parse_ids(",".join(["1-9999999"] * 3)) is None  # 32 bytes would have been 30 million ids
    assert parse_ids(f"1-{MAX_PARSED_IDS // 2},1-{MAX_PARSED_IDS // 2 + 1}") is None
