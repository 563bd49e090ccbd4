"""``manage.py mcp --transport stdio`` driven by the SDK's own stdio client, as an MCP host launches it.

The server runs in its own process, so it gets its own SQLite file, migrated and filled by
``manage.py`` too; the test reads the outcome from that file through ``manage.py shell``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp_server.conftest import tool_json

ROOT = Path(__file__).resolve().parents[2]

SETUP = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.items import memory_create
User = get_user_model()
alice = User.objects.create_user("alice", password="x")
bob = User.objects.create_user("bob", password="x")
secret = memory_create(namespace=build_namespace(agent_namespace="chat", user_id=str(bob.pk)),
                       content="Bob's vault code is 4321", memory_type="FACT", agent_id="chat")
print(json.dumps({"alice": Token.objects.create(user=alice).key, "alice_id": str(alice.pk),
                  "bob_id": str(bob.pk), "secret": secret.pk}))
"""

STATE = """
import json
from memoryboard.models import LongTermMemory
print(json.dumps([[m.pk, m.namespace, m.content, m.source, m.archived, m.archived_reason]
                  for m in LongTermMemory.objects.order_by("created_at")]))
"""


@pytest.fixture(scope="module")
def server_env(tmp_path_factory):
    """Environment of a server process on a fresh SQLite file, and the data created in it."""
    directory = tmp_path_factory.mktemp("mcp-stdio")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{directory / 'db.sqlite3'}", "OPENAI_BASE_URL": "",
           "MEMORYBOARD_TASKS_INLINE": "1", "PYTHONUNBUFFERED": "1"}
    env.pop("MEMORYBOARD_TOKEN", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    data = json.loads(manage_shell(env, SETUP))
    return env, data


def manage_shell(env, code: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                          check=True, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1]


def ns(user_id: str) -> str:
    return json.dumps(["agent:chat", f"user:{user_id}", "memories"], separators=(",", ":"))


def test_stdio_lists_saves_searches_deletes_and_ignores_forged_arguments(server_env):
    env, data = server_env
    # The token from the environment, as an MCP host's "env" block passes it.
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp", "--transport", "stdio"],
                                   env={**env, "MEMORYBOARD_TOKEN": data["alice"]}, cwd=str(ROOT))
    forged = {"user_id": data["bob_id"], "namespace": ns(data["bob_id"])}

    async def main():
        async with Client(params, read_timeout_seconds=60) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            saved = tool_json(await client.call_tool("memory_save", {"content": "I prefer dark mode", **forged}))
            found = tool_json(await client.call_tool("memory_search", {"query": "dark mode vault code", **forged}))
            bob_delete = tool_json(await client.call_tool("memory_delete", {"id": data["secret"], **forged}))
            deleted = tool_json(await client.call_tool("memory_delete", {"id": saved["id"]}))
            listed = tool_json(await client.call_tool("memory_list", {}))
            return names, saved, found, bob_delete, deleted, listed

    names, saved, found, bob_delete, deleted, listed = asyncio.run(main())
    assert names == ["memory_delete", "memory_list", "memory_save", "memory_search"]
    assert saved["saved"] is True
    assert [r["id"] for r in found["results"]] == [saved["id"]]
    assert "no memory" in bob_delete["error"]
    assert deleted["deleted"] is True and listed["items"] == []
    state = json.loads(manage_shell(env, STATE))
    assert state == [
        [data["secret"], ns(data["bob_id"]), "Bob's vault code is 4321", "manual", False, None],
        [saved["id"], ns(data["alice_id"]), "I prefer dark mode", "mcp", True, "user_deleted"],
    ]


def test_a_bad_or_missing_token_stops_the_server(server_env):
    env, _data = server_env
    bad = subprocess.run([sys.executable, "manage.py", "mcp", "--transport", "stdio", "--token", "nope"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert bad.returncode != 0 and "token is not valid" in bad.stderr and bad.stdout == ""
    missing = subprocess.run([sys.executable, "manage.py", "mcp"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert missing.returncode != 0 and "MEMORYBOARD_TOKEN" in missing.stderr


def _reply(process, timeout: float = 60) -> dict:
    """The server's next line; a server that does not answer fails the test instead of hanging it."""
    import select

    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, f"no reply within {timeout} s"
    line = process.stdout.readline()
    assert line, process.stderr.read()
    return json.loads(line)


def test_unreadable_lines_get_a_json_rpc_error_and_the_server_goes_on(server_env):
    env, data = server_env
    process = subprocess.Popen([sys.executable, "manage.py", "mcp", "--token", data["alice"]], cwd=ROOT, env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(b"this is not json\n")
        process.stdin.flush()
        assert _reply(process) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        process.stdin.write(b"\xff\xfe{\"jsonrpc\": \n")  # not UTF-8, and cut short
        process.stdin.flush()
        assert _reply(process)["error"]["code"] == -32700
        process.stdin.write(b'{"hello": "world"}\n')  # JSON, but not JSON-RPC
        process.stdin.flush()
        assert _reply(process) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        process.stdin.flush()
        answer = _reply(process)
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "memoryboard"
    finally:
        process.stdin.close()
        process.wait(timeout=30)


def test_the_sdk_client_carries_on_after_the_parse_error_reply(server_env):
    env, data = server_env
    # The host's first line is garbage (written ahead of the client's own traffic); the client gets
    # the -32700 reply, then its session works.
    script = f'{{ printf "garbage\\n"; cat; }} | "{sys.executable}" manage.py mcp --transport stdio'
    params = StdioServerParameters(command="sh", args=["-c", script],
                                   env={**env, "MEMORYBOARD_TOKEN": data["alice"]}, cwd=str(ROOT))

    async def main():
        async with Client(params, read_timeout_seconds=60) as client:
            return sorted(tool.name for tool in (await client.list_tools()).tools)

    assert asyncio.run(asyncio.wait_for(main(), 90)) == ["memory_delete", "memory_list", "memory_save", "memory_search"]
