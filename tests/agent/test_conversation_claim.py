"""A conversation id belongs to its first writer, claimed atomically; another user's id is refused whatever
the timing, and the history a turn reads is the owner's only (issue 12)."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.db import connection, connections
from rest_framework.test import APIClient

from memoryboard.conversations import conversation_claim
from memoryboard.llm.extraction import EXTRACTION_PROMPT
from memoryboard.models import ChatMessage, ConversationOwner

URL = "/api/v1/agents/chat/chat"


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.django_db
def test_the_first_writer_owns_the_id_and_the_other_user_gets_404(api, alice, bob):
    first = api.post(URL, {"message": "hello, I am alice", "conversation_id": "c-1"}, format="json")
    assert first.status_code == 200
    response = client_for(bob).post(URL, {"message": "bob tries the id", "conversation_id": "c-1"}, format="json")
    assert response.status_code == 404
    assert list(response.json()["error"]["fields"]) == ["conversation_id"]
    assert set(ChatMessage.objects.filter(conversation_id="c-1").values_list("user_id", flat=True)) == {str(alice.pk)}
    # The same user under another agent is refused too.
    other_agent = api.post("/api/v1/agents/quiet/chat", {"message": "hi", "conversation_id": "c-1"}, format="json")
    assert other_agent.status_code == 404


@pytest.mark.django_db
def test_a_platform_conversation_without_a_claim_belongs_to_its_first_author(alice, bob):
    ChatMessage.objects.create(conversation_id="old", agent_id="chat", user_id=str(bob.pk), role="USER", content="x")
    assert conversation_claim(conversation_id="old", user_id=str(alice.pk), agent_id="chat") is False
    assert ConversationOwner.objects.get(conversation_id="old").user_id == str(bob.pk)
    assert conversation_claim(conversation_id="old", user_id=str(bob.pk), agent_id="chat") is True


@pytest.mark.django_db
def test_history_is_read_by_owner(openai_settings, api, alice, bob):
    # A stray row of bob's in alice's conversation (written around memoryboard) never reaches her model call.
    assert api.post(URL, {"message": "first", "conversation_id": "c-2"}, format="json").status_code == 200
    ChatMessage.objects.create(conversation_id="c-2", agent_id="chat", user_id=str(bob.pk), role="USER",
                               content="bob's private note")
    assert api.post(URL, {"message": "second", "conversation_id": "c-2"}, format="json").status_code == 200
    turns = [r for r in openai_settings.chat_requests() if r["messages"][0]["content"] != EXTRACTION_PROMPT]
    sent = str(turns[-1]["messages"])  # the turn's own model call, not the extraction's after it
    assert "first" in sent and "bob's private note" not in sent


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_two_users_racing_for_a_new_conversation_id_never_share_it(openai_settings, alice, bob):
    if connection.vendor != "mysql":
        pytest.skip("the race is tested on MariaDB/MySQL (threads, real connections)")
    rounds = 15
    outcomes: list[tuple[str, str, int]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def post(user, conversation_id, barrier):
        try:
            client = client_for(user)
            barrier.wait()
            response = client.post(URL, {"message": f"secret-of-{user.username}-{conversation_id}",
                                         "conversation_id": conversation_id}, format="json")
            with lock:
                outcomes.append((conversation_id, user.username, response.status_code))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    for _ in range(rounds):
        conversation_id = uuid.uuid4().hex
        barrier = threading.Barrier(2)
        threads = [threading.Thread(target=post, args=(u, conversation_id, barrier)) for u in (alice, bob)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not errors, errors
    for conversation_id in {o[0] for o in outcomes}:
        statuses = sorted(status for cid, _user, status in outcomes if cid == conversation_id)
        assert statuses == [200, 404], statuses
        users = set(ChatMessage.objects.filter(conversation_id=conversation_id).values_list("user_id", flat=True))
        assert len(users) == 1
    for body in openai_settings.chat_requests():
        sent = str(body["messages"])
        assert not ("secret-of-alice" in sent and "secret-of-bob" in sent)
