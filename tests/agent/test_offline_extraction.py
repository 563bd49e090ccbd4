"""Statements told to the agent offline through the chat API are stored (one item per fact) and shown in
My memories; questions and requests are not; a secret is never stored, and the turn says so."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db

URL = "/api/v1/agents/chat/chat"

# The five statements that the offline rules did not store.
STATEMENTS = ["My birthday is on March 3rd.", "Our budget for the trip is 2,000 euros.",
              "I recently started learning the piano.", "我今年三十五岁。", "我养了一只叫豆豆的狗。"]


def tell(api, message):
    response = api.post(URL, {"message": message}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def my_memories(login, user) -> str:
    return login(user).get(reverse("my-memories")).content.decode()


def test_plain_statements_are_stored_and_shown_in_my_memories(api, alice, login):
    for statement in STATEMENTS:
        assert tell(api, statement)["extraction"] == "queued"
    stored = sorted(m.content for m in LongTermMemory.objects.filter(archived=False))
    assert stored == sorted(s.rstrip("。.") for s in STATEMENTS)
    html = my_memories(login, alice)
    assert all(escape(s.rstrip("。.")) in html for s in STATEMENTS)


def test_a_long_turn_gives_one_item_per_fact(api, alice):
    tell(api, "hey! can you help me write a birthday card for my sister? I'm 34, I live in Porto with my wife and "
              "I work as a nurse. 我老婆是老师，我们周末一般去爬山。")
    stored = {m.content for m in LongTermMemory.objects.filter(archived=False)}
    assert {"I'm 34", "I live in Porto with my wife", "I work as a nurse", "我老婆是老师", "我们周末一般去爬山"} <= stored
    assert not any("birthday card" in c or "can you" in c for c in stored)


@pytest.mark.parametrize("message", ["What is the capital of France?", "Can you recommend a good book about Rome?",
                                     "帮我写一首关于秋天的诗", "你觉得我该买哪个？", "thanks a lot!",
                                     "from now on always answer in French"])
def test_a_question_or_a_request_is_not_stored(api, alice, login, message):
    tell(api, message)
    assert not LongTermMemory.objects.exists()
    assert escape(message) not in my_memories(login, alice)


def test_a_secret_is_not_stored_and_the_turn_says_so(api, alice, login):
    body = tell(api, "my wifi password is sunflower77, and I work from home")
    assert body["extraction"] == "queued; not stored: a password"
    assert [m.content for m in LongTermMemory.objects.all()] == ["I work from home"]
    assert tell(api, "我的银行卡号是6222 0202 0000 1234 567")["extraction"] == (
        "skipped: nothing to remember: only questions, greetings, hypotheticals or secrets; not stored: a card number")
    assert "sunflower77" not in my_memories(login, alice)
