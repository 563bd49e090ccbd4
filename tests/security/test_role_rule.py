"""One rule for each role on every surface (roles.may_write_memories_of; README § Roles):

| role       | own items       | another user's items |
|------------|-----------------|----------------------|
| superuser  | read and write  | read and write       |
| support    | read and write  | read and write       |
| developer  | read and write  | read only            |
| end user   | read and write  | nothing              |

One table-driven test: every write surface (REST API, web pages, MCP, /v1, the agent chat API) for
every role, on the caller's own items and on another user's; the answer and the stored outcome must
follow the rule."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.items import memory_create
from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db

ROLES = ("superuser", "support", "developer", "end_user")
RULE = {  # role: (writes own items, writes another user's items)
    "superuser": (True, True),
    "support": (True, True),
    "developer": (True, False),
    "end_user": (True, False),
}


def _item(user, content: str) -> LongTermMemory:
    return memory_create(namespace=build_namespace(agent_namespace="chat", user_id=str(user.pk)), content=content,
                         memory_type="FACT", source="manual", agent_id="chat")


def _token(user) -> str:
    return Token.objects.get_or_create(user=user)[0].key


def _api(user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token " + _token(user))
    return api


def _web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _contents(user) -> set[str]:
    prefix = json.dumps(["agent:chat", f"user:{user.pk}", "memories"], separators=(",", ":"))
    return {m.content for m in LongTermMemory.objects.filter(namespace=prefix, archived=False)}


# Each surface: (actor, owner) -> whether the write happened; the owner is the actor for "own" rows.


def api_import(actor, owner):
    body = {"items": [{"content": "Imported through the API"}], "dry_run": False, "agent": "chat"}
    if owner != actor:
        body["user"] = str(owner.pk)
    response = _api(actor).post("/api/v1/memories/import", body, format="json")
    assert response.status_code in (200, 403), response.content
    return response.status_code == 200 and "Imported through the API" in _contents(owner)


def api_edit(actor, owner):
    item = _item(owner, "Before the API edit")
    response = _api(actor).patch(f"/api/v1/memories/{item.pk}/", {"content": "After the API edit"}, format="json")
    assert response.status_code in (200, 403, 404), response.content
    return response.status_code == 200 and "After the API edit" in _contents(owner)


def api_delete(actor, owner):
    item = _item(owner, "Deleted through the API")
    response = _api(actor).delete(f"/api/v1/memories/{item.pk}/")
    assert response.status_code in (204, 403, 404), response.content
    return response.status_code == 204 and "Deleted through the API" not in _contents(owner)


def web_import(actor, owner):
    response = _web(actor).post("/me/memories/import/", {
        "text": json.dumps([{"content": "Imported on the page"}]), "mode": "skip", "agent": "chat", "step": "apply"})
    assert response.status_code in (302, 403), response.content
    return response.status_code == 302 and "Imported on the page" in _contents(owner)


def web_add(actor, owner):
    response = _web(actor).post("/me/memories/add/", {"agent": "chat", "memory_type": "FACT",
                                                      "content": "Added on the page"})
    assert response.status_code in (302, 403)
    return response.status_code == 302 and "Added on the page" in _contents(owner)


def web_edit(actor, owner):
    item = _item(owner, "Before the page edit")
    response = _web(actor).post(f"/me/memories/{item.pk}/edit/", {"content": "After the page edit"})
    assert response.status_code in (200, 302, 403)
    return "After the page edit" in _contents(owner)


def web_delete(actor, owner):
    item = _item(owner, "Deleted on the page")
    response = _web(actor).post(f"/me/memories/{item.pk}/delete/")
    assert response.status_code in (200, 302, 403)
    return "Deleted on the page" not in _contents(owner)


def mcp_save(actor, owner):
    from memoryboard.mcp_server.tools import McpError, identity_for_token, mcp_memory_save

    try:
        mcp_memory_save(identity=identity_for_token(key=_token(actor), agent_id="chat"), content="Saved over MCP")
    except McpError:
        return False
    return "Saved over MCP" in _contents(owner)


def mcp_delete(actor, owner):
    from memoryboard.mcp_server.tools import McpError, identity_for_token, mcp_memory_delete

    item = _item(owner, "Deleted over MCP")
    try:
        mcp_memory_delete(identity=identity_for_token(key=_token(actor), agent_id="chat"), memory_id=item.pk)
    except McpError:
        return False
    return "Deleted over MCP" not in _contents(owner)


def v1_chat(actor, owner):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Bearer " + _token(actor))
    response = api.post("/v1/chat/completions", {"model": "chat", "messages": [
        {"role": "user", "content": "Please remember that I keep bees"}]}, format="json")
    assert response.status_code in (200, 403), response.content
    return response.status_code == 200 and "I keep bees" in _contents(owner)


def agent_chat(actor, owner):
    response = _api(actor).post("/api/v1/agents/chat/chat", {"message": "Please remember that I grow tomatoes"},
                                format="json")
    assert response.status_code in (200, 403), response.content
    return response.status_code == 200 and "I grow tomatoes" in _contents(owner)


OWN_SURFACES = [api_import, api_edit, api_delete, web_import, web_add, web_edit, web_delete, mcp_save, mcp_delete,
                v1_chat, agent_chat]
# The surfaces that can name another user's items at all (the others act for the caller only).
OTHERS_SURFACES = [api_import, api_edit, api_delete]


@pytest.fixture
def actors(superuser, support_user, developer, bob):
    return {"superuser": superuser, "support": support_user, "developer": developer, "end_user": bob}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("surface", OWN_SURFACES + [("others", s) for s in OTHERS_SURFACES],
                         ids=lambda s: s.__name__ if callable(s) else f"others-{s[1].__name__}")
def test_every_surface_follows_the_one_rule(actors, alice, role, surface):
    actor = actors[role]
    if isinstance(surface, tuple):
        run, owner, expected = surface[1], alice, RULE[role][1]
    else:
        run, owner, expected = surface, actor, RULE[role][0]
    assert run(actor, owner) is expected


def test_the_rule_is_what_the_readme_says():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for line in ("| superuser | read and write | read and write |", "| support | read and write | read and write |",
                 "| developers | read and write | read only |", "| end users | read and write | nothing |"):
        assert line in readme, line
