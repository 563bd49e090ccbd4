"""The MCP server (``mcp`` SDK's MCPServer) with memoryboard's four memory tools.

Each tool asks ``identity_of(ctx)`` who it acts for: over stdio the identity fixed when the process
started (``--token``), over HTTP the one the ``/mcp/`` view authenticated for this request. The tools'
arguments have no user, agent or namespace; extra arguments are ignored.
"""

# No ``from __future__ import annotations``: the SDK reads the tools' signatures (Context, Annotated).

from collections.abc import Callable
from typing import Annotated, Any

import anyio
import mcp_types as types
from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import Field

from memoryboard.mcp_server.tools import (
    MAX_LIST,
    TOOL_SEARCH_MAX_K,
    McpError,
    McpIdentity,
    mcp_memory_delete,
    mcp_memory_list,
    mcp_memory_save,
    mcp_memory_search,
)
from memoryboard.models import MemoryType

INSTRUCTIONS = (
    "Long-term memory of the user you are talking to (memoryboard). Search it before answering questions "
    "about the user; save durable facts, preferences, procedures and episodes as short sentences."
)
MemoryTypeName = Annotated[str, Field(description="FACT (stable), PREFERENCE (may change), PROCEDURE (may expire), "
                                                  "EPISODE (time-bound).", json_schema_extra={"enum": list(MemoryType.values)})]


def _call(identity_of: Callable[[Context], McpIdentity], ctx: Context, service, **kwargs) -> dict[str, Any]:
    """Run a service in the tool's worker thread with a usable database connection; errors for the model."""
    close_old_connections()
    try:
        return service(identity=identity_of(ctx), **kwargs)
    except McpError as exc:
        raise ToolError(str(exc)) from exc
    finally:
        close_old_connections()


def build_server(*, identity_of: Callable[[Context], McpIdentity]) -> MCPServer:
    """The MCP server; ``identity_of`` binds every call to a user and an agent."""
    server = MCPServer(name="memoryboard", instructions=INSTRUCTIONS)

    @server.tool(description="Search the user's long-term memory for items relevant to a query, best first.")
    def memory_search(
        query: Annotated[str, Field(min_length=1, description="What to look for.")],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=TOOL_SEARCH_MAX_K, description="How many items at most.")] = 5,
    ) -> dict[str, Any]:
        return _call(identity_of, ctx, mcp_memory_search, query=query, k=k)

    @server.tool(description="Save one durable memory about the user (one short, self-contained sentence). "
                             "An item that contains it, or that it contains, is not saved twice.")
    def memory_save(
        content: Annotated[str, Field(min_length=1, description="The memory, one sentence.")],
        ctx: Context,
        type: MemoryTypeName = MemoryType.FACT,  # noqa: A002 - the argument's name in the memory_save tool
        expires_at: Annotated[str | None, Field(
            description="Optional: when this stops being true or useful (ISO 8601 date or time).")] = None,
    ) -> dict[str, Any]:
        return _call(identity_of, ctx, mcp_memory_save, content=content, memory_type=type, expires_at=expires_at)

    @server.tool(description="List the user's active memories, newest first.")
    def memory_list(
        ctx: Context,
        type: Annotated[str | None, Field(description="Only this type (FACT, PREFERENCE, PROCEDURE, EPISODE).")] = None,  # noqa: A002
        limit: Annotated[int, Field(ge=1, le=MAX_LIST)] = 20,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> dict[str, Any]:
        return _call(identity_of, ctx, mcp_memory_list, memory_type=type, limit=limit, offset=offset)

    @server.tool(description="Delete one memory by id. The user can restore it from 'My memories' for a while.")
    def memory_delete(
        id: Annotated[str, Field(min_length=1, description="The id from memory_search or memory_list.")],  # noqa: A002
        ctx: Context,
    ) -> dict[str, Any]:
        return _call(identity_of, ctx, mcp_memory_delete, memory_id=id)

    return server


def _stream_error_reply(exc: Exception):
    """The JSON-RPC error for a line of stdin the transport could not read: -32700 when it is not JSON,
    -32600 when it is JSON but not a JSON-RPC message. The id is unknown (null), as JSON-RPC 2.0 says."""
    errors = exc.errors() if hasattr(exc, "errors") else []
    not_json = not errors or any(error.get("type") == "json_invalid" for error in errors)
    error = (types.ErrorData(code=types.PARSE_ERROR, message="Parse error") if not_json
             else types.ErrorData(code=types.INVALID_REQUEST, message="Invalid Request"))
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))


async def run_stdio(server: MCPServer) -> None:
    """Serve ``server`` over stdin/stdout like ``MCPServer.run("stdio")``, except that a line that cannot
    be read gets a JSON-RPC error reply: the SDK's transport only logs it, and the client would wait
    for ever for the answer to its request."""
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves
    async with stdio_server() as (read_stream, write_stream):
        forward, checked = create_context_streams[SessionMessage | Exception](0)

        async def answer_unreadable_lines() -> None:
            async with forward:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(_stream_error_reply(item))
                    else:
                        await forward.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_unreadable_lines)
            await lowlevel.run(checked, write_stream, lowlevel.create_initialization_options())
