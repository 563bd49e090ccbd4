"""The MCP server over streamable HTTP at /mcp/ of the live dashboard, with the SDK's own client."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared._httpx_utils import create_mcp_http_client

from memoryboard.models.namespaces import build_namespace
from memoryboard.models import AuditLog, LongTermMemory
from tests.mcp_server.conftest import tool_json

pytestmark = pytest.mark.django_db(transaction=True)


def run_session(url: str, key: str, calls):
    """Open one MCP session with ``key`` and run ``calls(client)``; returns what it returns."""

    async def main():
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await calls(client)

    return asyncio.run(main())


@pytest.fixture
def mcp_url(live_server):
    return f"{live_server.url}/mcp/"


def ns_text(user, agent="chat"):
    return build_namespace(agent_namespace=agent, user_id=str(user.pk)).as_text()


def test_lists_saves_searches_lists_and_deletes(mcp_url, token_of, alice):
    key = token_of(alice)

    async def calls(client):
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        saved = tool_json(await client.call_tool("memory_save", {"content": "I drink green tea every morning",
                                                                "type": "PREFERENCE"}))
        again = tool_json(await client.call_tool("memory_save", {"content": "I drink green tea every morning"}))
        found = tool_json(await client.call_tool("memory_search", {"query": "green tea", "k": 3}))
        listed = tool_json(await client.call_tool("memory_list", {}))
        deleted = tool_json(await client.call_tool("memory_delete", {"id": saved["id"]}))
        after = tool_json(await client.call_tool("memory_list", {}))
        return names, saved, again, found, listed, deleted, after

    names, saved, again, found, listed, deleted, after = run_session(mcp_url, key, calls)
    assert names == ["memory_delete", "memory_list", "memory_save", "memory_search"]
    assert saved["saved"] is True and saved["type"] == "PREFERENCE"
    assert again == {"saved": False, "duplicate_of": saved["id"]}
    assert [r["id"] for r in found["results"]] == [saved["id"]]
    assert [(i["id"], i["content"], i["source"]) for i in listed["items"]] == [
        (saved["id"], "I drink green tea every morning", "mcp")]
    assert deleted["deleted"] is True and after["items"] == []
    memory = LongTermMemory.objects.get(pk=saved["id"])
    assert memory.namespace == ns_text(alice)
    assert memory.archived and memory.archived_reason == "user_deleted"  # soft: restorable
    assert AuditLog.objects.filter(object_id=saved["id"], action="delete", actor=alice).exists()


def test_forged_user_agent_or_namespace_arguments_change_nothing(mcp_url, token_of, alice, bob, make_memory):
    secret = make_memory(bob, "Bob's vault code is 4321")
    forged = {"user_id": str(bob.pk), "_userId": str(bob.pk), "namespace": ns_text(bob), "agent": "quiet"}

    async def calls(client):
        saved = tool_json(await client.call_tool("memory_save", {"content": "I live in Lyon", **forged}))
        found = tool_json(await client.call_tool("memory_search", {"query": "vault code 4321", **forged}))
        listed = tool_json(await client.call_tool("memory_list", forged))
        deleted = tool_json(await client.call_tool("memory_delete", {"id": secret.pk, **forged}))
        return saved, found, listed, deleted

    saved, found, listed, deleted = run_session(mcp_url, token_of(alice), calls)
    assert LongTermMemory.objects.get(pk=saved["id"]).namespace == ns_text(alice)
    assert secret.pk not in {r["id"] for r in found["results"]}
    assert [item["content"] for item in listed["items"]] == ["I live in Lyon"]
    assert "no memory" in deleted["error"]
    secret.refresh_from_db()
    assert not secret.archived
    assert list(LongTermMemory.objects.filter(namespace=ns_text(bob)).values_list("pk", flat=True)) == [secret.pk]


def test_bad_arguments_are_tool_errors(mcp_url, token_of, alice):
    async def calls(client):
        return [tool_json(await client.call_tool(name, args)) for name, args in [
            ("memory_save", {"content": "x", "type": "OPINION"}),
            ("memory_search", {"query": "tea", "k": 500}),
            ("memory_list", {"limit": 0}),
        ]]

    for result in run_session(mcp_url, token_of(alice), calls):
        assert "error" in result
    assert not LongTermMemory.objects.exists()


def post(url, body, headers):
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_a_bad_or_missing_token_is_refused(mcp_url, token_of, alice):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": f"Token {token_of(alice)}x"}):
        status, response_headers, _body = post(mcp_url, ping, headers)
        assert status == 401 and response_headers["WWW-Authenticate"].startswith("Bearer")

    async def calls(client):
        return await client.list_tools()

    with pytest.raises(BaseExceptionGroup) as caught:  # the SDK's client gives up on the 401
        run_session(mcp_url, "not-a-token", calls)
    assert caught.group_contains(MCPError, depth=None)
    request = urllib.request.Request(mcp_url, method="GET", headers={"Authorization": f"Bearer {token_of(alice)}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405


def test_a_lone_surrogate_is_refused_not_a_crash(mcp_url, token_of, alice):
    # The SDK's client cannot even encode it; a hostile client sends the escape as raw JSON. The SDK's
    # parser refuses it (JSON-RPC parse error); pydantic's ``str`` would too, and the tools' numbers are ``int``.
    body = ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", '
            '"params": {"name": "memory_save", "arguments": {"content": "bad \\ud800 text"}}}')
    status, _headers, answer = post(mcp_url, body, {"Authorization": f"Bearer {token_of(alice)}"})
    assert status == 400 and json.loads(answer)["error"]["code"] == -32700
    assert not LongTermMemory.objects.exists()


def test_a_default_agent_without_memory_is_a_check_warning_and_refused(settings, mcp_url, token_of, alice):
    from memoryboard.checks import check_default_agent

    assert check_default_agent() == []
    settings.MEMORYBOARD_DEFAULT_AGENT = "plain"  # an agent without long-term memory
    assert [w.id for w in check_default_agent()] == ["memoryboard.W004"]
    status, _headers, body = post(mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                                  {"Authorization": f"Bearer {token_of(alice)}"})
    assert status == 503 and b"keeps no long-term memory" in body


def test_save_with_an_expiry(mcp_url, token_of, alice):
    async def calls(client):
        good = tool_json(await client.call_tool("memory_save", {"content": "My exam is on 1 June",
                                                               "type": "EPISODE", "expires_at": "2031-06-02"}))
        bad = tool_json(await client.call_tool("memory_save", {"content": "My trip is soon", "expires_at": "soon"}))
        return good, bad

    good, bad = run_session(mcp_url, token_of(alice), calls)
    assert good["saved"] and LongTermMemory.objects.get(pk=good["id"]).value_json["expiresAt"] == "2031-06-02T00:00:00Z"
    assert "expires_at" in bad["error"]

