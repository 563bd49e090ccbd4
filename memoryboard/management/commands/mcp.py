"""``manage.py mcp --transport stdio --token TOKEN``: the MCP server for an MCP host (Claude Desktop, Cursor, …).

The token (or ``MEMORYBOARD_TOKEN``) is one of the project's API tokens; every tool call acts for its
user, in the namespace of ``--agent`` (default ``MEMORYBOARD_DEFAULT_AGENT``). Streamable HTTP is served
by the dashboard itself at ``/mcp/``.
"""

from __future__ import annotations

import os

import anyio
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memoryboard.management.database import require_migrated
from memoryboard.mcp_server.server import build_server, run_stdio
from memoryboard.mcp_server.tools import InvalidToken, McpError, identity_for_token


class Command(BaseCommand):
    help = "Run memoryboard's MCP server (memory_search, memory_save, memory_list, memory_delete) over stdio."

    def add_arguments(self, parser):
        parser.add_argument("--transport", choices=["stdio"], default="stdio",
                            help="stdio (streamable HTTP is served by the dashboard at /mcp/).")
        parser.add_argument("--token", default=None, help="An API token; default: the MEMORYBOARD_TOKEN variable.")
        parser.add_argument("--agent", default=None, help="The agent whose memories to use (default MEMORYBOARD_DEFAULT_AGENT).")

    def execute(self, *args, **options):
        # The stdio server signs nothing (no sessions, cookies or links): an MCP host's config needs no
        # MEMORYBOARD_SECRET_KEY, so its system checks (memoryboard.E010 none, E011 a weak one) do not stop
        # this command.
        settings.SILENCED_SYSTEM_CHECKS = [*settings.SILENCED_SYSTEM_CHECKS, "memoryboard.E010", "memoryboard.E011"]
        return super().execute(*args, **options)

    def handle(self, *args, transport: str, token: str | None, agent: str | None, **options):
        require_migrated()

        key = token or os.environ.get("MEMORYBOARD_TOKEN", "")
        if not key:
            raise CommandError("No token: pass --token or set MEMORYBOARD_TOKEN.")
        try:
            identity = identity_for_token(key=key, agent_id=agent)
        except InvalidToken as exc:
            raise CommandError(f"The token is not valid ({exc}).") from exc
        except McpError as exc:
            raise CommandError(str(exc)) from exc
        connection.close()  # tool calls run in worker threads with their own connections

        server = build_server(identity_of=lambda ctx: identity)
        anyio.run(run_stdio, server)  # stdout now carries only the protocol; logs go to stderr
