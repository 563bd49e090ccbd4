"""Every endpoint and verb, as each role, against another user's (alice's) objects.

A refused request gets 401/403/404, its body holds none of alice's data, and nothing changes in the
database. Allowed roles (support, superuser; developers for reads) get their answer.
"""

from __future__ import annotations

import pytest

from memoryboard.models import AuditLog, ChatMessage, LongTermMemory

pytestmark = pytest.mark.django_db

SECRET = "ALICE-SECRET-7f3a"
ROLES = ["anonymous", "alice", "bob", "developer", "support", "superuser"]

# (name, method, url, body); {mid} is alice's memory id, {conv} her conversation, {alice} her user id.
ENDPOINTS = [
    ("retrieve", "get", "/api/v1/memories/{mid}/", None),
    ("patch", "patch", "/api/v1/memories/{mid}/", {"content": "overwritten"}),
    ("put", "put", "/api/v1/memories/{mid}/", {"content": "overwritten"}),
    ("delete", "delete", "/api/v1/memories/{mid}/", None),
    ("archive", "post", "/api/v1/memories/{mid}/archive/", None),
    ("restore", "post", "/api/v1/memories/{mid}/restore/", None),
    ("list_by_user", "get", "/api/v1/memories/?user={alice}", None),
    ("search_by_user", "get", "/api/v1/memories/search/?q=" + SECRET + "&user={alice}", None),
    ("search_by_namespace", "get", '/api/v1/memories/search/?q=' + SECRET + '&namespace=["agent:chat","user:{alice}","memories"]', None),
    ("conversations", "get", "/api/v1/conversations/", None),
    ("messages", "get", "/api/v1/conversations/{conv}/messages/", None),
    ("plan", "post", "/api/v1/strategies/memory/delete/plan", {"conversation_id": "{conv}", "params": {"keep_latest": 1}}),
    ("apply", "post", "/api/v1/strategies/memory/delete/apply", {"conversation_id": "{conv}", "params": {"keep_latest": 1}}),
]

OK = 200
# Expected status per endpoint and role; None means "allowed, but must not contain alice's data" (a list).
EXPECTED = {
    "retrieve": {"anonymous": 401, "alice": OK, "bob": 404, "developer": OK, "support": OK, "superuser": OK},
    "patch": {"anonymous": 401, "alice": OK, "bob": 404, "developer": 403, "support": OK, "superuser": OK},
    "put": {"anonymous": 401, "alice": 405, "bob": 405, "developer": 405, "support": 405, "superuser": 405},
    "delete": {"anonymous": 401, "alice": 204, "bob": 404, "developer": 403, "support": 204, "superuser": 204},
    "archive": {"anonymous": 401, "alice": 403, "bob": 404, "developer": 403, "support": OK, "superuser": OK},
    "restore": {"anonymous": 401, "alice": OK, "bob": 404, "developer": 403, "support": OK, "superuser": OK},
    "list_by_user": {"anonymous": 401, "alice": OK, "bob": None, "developer": OK, "support": OK, "superuser": OK},
    "search_by_user": {"anonymous": 401, "alice": OK, "bob": None, "developer": OK, "support": OK, "superuser": OK},
    "search_by_namespace": {"anonymous": 401, "alice": OK, "bob": None, "developer": OK, "support": OK, "superuser": OK},
    "conversations": {"anonymous": 401, "alice": OK, "bob": None, "developer": OK, "support": OK, "superuser": OK},
    "messages": {"anonymous": 401, "alice": OK, "bob": 404, "developer": OK, "support": OK, "superuser": OK},
    "plan": {"anonymous": 401, "alice": 403, "bob": 403, "developer": OK, "support": OK, "superuser": OK},
    "apply": {"anonymous": 401, "alice": 403, "bob": 403, "developer": 403, "support": OK, "superuser": OK},
}


def _state():
    return (
        sorted(LongTermMemory.objects.values_list("id", "namespace", "value_json", "archived", "archived_reason")),
        sorted(ChatMessage.objects.values_list("id", "conversation_id", "user_id", "content")),
        AuditLog.objects.count(),
    )


@pytest.fixture
def world(request, alice, bob, developer, support_user, superuser, make_memory, make_conversation):
    memory = make_memory(alice, f"{SECRET} alice works on a secret project")
    make_memory(bob, "bob likes tea")
    conv = make_conversation(alice, 4, conversation_id="conv-alice")
    ChatMessage.objects.filter(conversation_id=conv).update(content=f"{SECRET} message")
    make_conversation(bob, 2)
    users = {"anonymous": None, "alice": alice, "bob": bob, "developer": developer, "support": support_user,
             "superuser": superuser}
    return {"memory": memory, "conv": conv, "alice": alice, "users": users}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e[0] for e in ENDPOINTS])
def test_matrix(as_user, world, role, endpoint):
    name, method, url, body = endpoint
    fmt = {"mid": world["memory"].pk, "conv": world["conv"], "alice": world["alice"].pk}
    url = url.format(**fmt)
    if body is not None:
        body = {k: (v.format(**fmt) if isinstance(v, str) else v) for k, v in body.items()}
    client = as_user(world["users"][role])
    before = _state()
    response = getattr(client, method)(url, body, format="json") if body is not None else getattr(client, method)(url)
    expected = EXPECTED[name][role]
    text = response.content.decode("utf-8", "replace")
    if expected is None:
        assert response.status_code == 200, text
        assert SECRET not in text and world["memory"].pk not in text and world["conv"] not in text
        assert _state() == before
        return
    assert response.status_code == expected, (name, role, text[:300])
    if expected in (401, 403, 404, 405):
        assert SECRET not in text and world["memory"].pk not in text, text
        assert _state() == before
        body_json = response.json()
        assert set(body_json) == {"error"}
    elif method == "get":
        assert SECRET in text or world["conv"] in text


def test_namespace_in_body_cannot_move_an_item(as_user, world):
    bob = world["users"]["bob"]
    own = LongTermMemory.objects.get(value_json__content="bob likes tea")
    before = _state()
    alice_ns = world["memory"].namespace
    for body in ({"namespace": alice_ns}, {"content": "x", "_userId": str(world["alice"].pk)},
                 {"content": "x", "_namespace": alice_ns}, {"content": "x", "user": str(world["alice"].pk)}):
        response = as_user(bob).patch(f"/api/v1/memories/{own.pk}/", body, format="json")
        assert response.status_code == 400
    assert _state() == before


def test_user_id_in_context_body_is_refused(as_user, world):
    response = as_user(world["users"]["bob"]).post(
        "/api/v1/strategies/context/trim/apply",
        {"messages": [], "_userId": str(world["alice"].pk), "namespace": world["memory"].namespace},
        format="json",
    )
    assert response.status_code == 400
    assert SECRET not in response.content.decode()


def test_token_of_bob_sees_nothing_of_alice(api, world):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=world["users"]["bob"])
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    for url in (f"/api/v1/memories/{world['memory'].pk}/", f"/api/v1/conversations/{world['conv']}/messages/"):
        assert api.get(url).status_code == 404
    assert SECRET not in api.get("/api/v1/memories/?limit=200").content.decode()
    assert SECRET not in api.get(f"/api/v1/memories/search/?q={SECRET}&k=100").content.decode()


def test_agent_chat_cannot_reach_alice(as_user, world):
    """The agent endpoint: another user's conversation is 404; ids in the body do not redirect memory."""
    bob = as_user(world["users"]["bob"])
    before = _state()
    response = bob.post("/api/v1/agents/chat/chat", {"message": "hello", "conversation_id": world["conv"]}, format="json")
    assert response.status_code == 404
    assert SECRET not in response.content.decode()
    assert _state() == before
    assert as_user(None).post("/api/v1/agents/chat/chat", {"message": "hello"}, format="json").status_code == 401

    response = bob.post(
        "/api/v1/agents/chat/chat",
        {"message": f"What do you remember about {SECRET} and my secret project?",
         "_userId": str(world["alice"].pk), "namespace": world["memory"].namespace, "user_id": str(world["alice"].pk)},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert SECRET not in response.content.decode()
    alice_memory = LongTermMemory.objects.get(pk=world["memory"].pk)
    assert alice_memory.access_count == 0 and alice_memory.value_json == world["memory"].value_json
    assert not ChatMessage.objects.filter(user_id=str(world["alice"].pk)).exclude(conversation_id=world["conv"]).exists()
