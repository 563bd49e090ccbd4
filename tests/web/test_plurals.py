"""Counts read as English: "1 memory paused", "2 memories paused", never "1 items"; and in Chinese."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.admin.conftest import run_action

pytestmark = pytest.mark.django_db


def _flash(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


@pytest.mark.parametrize(("n", "said"), [(1, "1 memory paused."), (2, "2 memories paused.")])
def test_my_memories_bulk_pause_says_singular_and_plural(login, alice, make_memory, n, said):
    items = [make_memory(alice, f"item {i}") for i in range(n)]
    data = {"action": "pause", "scope": "selected", "ids": [m.pk for m in items], "confirm": "True"}
    response = login(alice).post(reverse("my-memories-bulk"), data, follow=True)
    assert said in _flash(response)


@pytest.mark.parametrize(("limit", "n", "said"), [
    (0, 1, "1 memory is selected; one action changes at most 0 at once"),
    (1, 2, "2 memories are selected; one action changes at most 1 at once"),
])
def test_my_memories_bulk_over_the_limit(login, alice, make_memory, monkeypatch, limit, n, said):
    from memoryboard.web.my_memories import bulk

    monkeypatch.setattr(bulk, "MAX_BULK_ITEMS", limit)
    items = [make_memory(alice, f"item {i}") for i in range(n)]
    data = {"action": "pause", "scope": "selected", "ids": [m.pk for m in items]}
    response = login(alice).post(reverse("my-memories-bulk"), data, follow=True)
    assert any(message.startswith(said) for message in _flash(response)), _flash(response)
    assert not any("items is" in message for message in _flash(response))


@pytest.mark.parametrize(("limit", "said"), [(1, "More than 1 item is selected;"),
                                             (2, "More than 2 items are selected;")])
def test_admin_bulk_over_the_limit(login, support_user, alice, make_memory, monkeypatch, limit, said):
    from memoryboard.admin import memory as memory_admin

    monkeypatch.setattr(memory_admin, "MAX_BULK_ITEMS", limit)
    items = [make_memory(alice, f"item {i}") for i in range(limit + 1)]
    client = login(support_user)
    run_action(client, "archive_selected", [m.pk for m in items], confirm=False)
    response = client.get(reverse("admin:memoryboard_longtermmemory_changelist"))
    assert any(message.startswith(said) for message in _flash(response)), _flash(response)


def test_the_limit_message_is_chinese_in_chinese(login, alice, make_memory, monkeypatch, settings):
    from memoryboard.web.my_memories import bulk

    settings.LANGUAGE_CODE = "zh-hans"
    monkeypatch.setattr(bulk, "MAX_BULK_ITEMS", 1)
    items = [make_memory(alice, f"item {i}") for i in range(2)]
    data = {"action": "pause", "scope": "selected", "ids": [m.pk for m in items]}
    response = login(alice).post(reverse("my-memories-bulk"), data, follow=True)
    assert "选中了 2 条记忆；一次操作最多更改 1 条" in " ".join(_flash(response))
