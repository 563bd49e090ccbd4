"""The MCP tools as plain services: search, save, list and (soft) delete in the bound user's namespace.

The identity (user and agent) comes from the token the client connected with, never from a tool
argument: an argument naming a user, agent or namespace is not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from rest_framework.exceptions import AuthenticationFailed

from memoryboard.agents_config import get_agents_config
from memoryboard.ltm.store.erase_gate import UserDataErased, work_begun, work_begun_at
from memoryboard.ltm.store.items import memory_delete_for_user
from memoryboard.ltm.store.selectors import filter_memories, own_memories
from memoryboard.ltm.store.tasks import current_items
from memoryboard.ltm.write.tools import TOOL_SEARCH_MAX_K, memory_tool_save, memory_tool_search
from memoryboard.models import MemoryType, Source
from memoryboard.models.namespaces import Namespace, build_namespace
from memoryboard.roles import may_write_memories_of, platform_user_id
from memoryboard.shared.authentication import TokenAuthentication

MAX_LIST = 100
MCP_CONVERSATION = "mcp"  # the conversation id under which MCP searches are logged as accesses


class McpError(ValueError):
    """A tool call that cannot be done; the message goes back to the client as the tool's error."""


class InvalidToken(McpError):
    pass


@dataclass(frozen=True)
class McpIdentity:
    """Who an MCP connection acts for: the token's user and the server's agent."""

    user_pk: Any
    user_id: str
    agent_id: str
    agent_namespace: str

    @property
    def namespace(self) -> Namespace:
        return build_namespace(agent_namespace=self.agent_namespace, user_id=self.user_id)

    def user(self):
        return get_user_model().objects.get(pk=self.user_pk)


def default_agent() -> str:
    return settings.MEMORYBOARD_DEFAULT_AGENT


def identity_for_token(*, key: str, agent_id: str | None = None) -> McpIdentity:
    """The identity of an API token (the project's tokens, ``/api/v1/auth/token/``).

    Raises:
        InvalidToken: no such token, or its user is inactive.
        McpError: the agent is not configured or keeps no long-term memory.
    """
    if not key:
        raise InvalidToken("no token")
    try:
        user, _token = TokenAuthentication().authenticate_credentials(key)
    except AuthenticationFailed as exc:
        raise InvalidToken(str(exc.detail)) from exc
    agent_id = agent_id or default_agent()
    agent = get_agents_config().get(agent_id)
    if agent is None:
        raise McpError(f"unknown agent {agent_id!r} (MEMORYBOARD_DEFAULT_AGENT)")
    if not agent.long_term_memory.enabled:
        raise McpError(f"agent {agent_id!r} keeps no long-term memory")
    return McpIdentity(user_pk=user.pk, user_id=platform_user_id(user), agent_id=agent.agent_id,
                       agent_namespace=agent.long_term_memory.namespace)


def _own(identity: McpIdentity):
    return filter_memories(own_memories(user_id=identity.user_id), agent=identity.agent_namespace)


def _item(memory) -> dict[str, Any]:
    return {"id": memory.pk, "type": memory.memory_type, "content": memory.content,
            "created_at": memory.created_at.isoformat(), "source": memory.source}


def mcp_memory_search(*, identity: McpIdentity, query: str, k: int = 5) -> dict[str, Any]:
    result = memory_tool_search(namespace=identity.namespace, agent_id=identity.agent_id,
                                conversation_id=MCP_CONVERSATION, query=query, k=k)
    if "error" in result:
        raise McpError(f"{result['field']}: {result['error']}" if result.get("field") else result["error"])
    return result


def _require_write(identity: McpIdentity, user=None):
    """The one role rule (``roles.may_write_memories_of``) for the connection's user; returns the user."""
    user = user or identity.user()
    if not may_write_memories_of(user, owner_user_id=identity.user_id):
        raise McpError("your role may not change these memories")
    return user


def mcp_memory_save(*, identity: McpIdentity, content: str, memory_type: str = MemoryType.FACT,
                    expires_at: str | None = None) -> dict[str, Any]:
    _require_write(identity)
    if str(memory_type or "").upper() not in MemoryType.values:
        raise McpError(f"type: use one of {', '.join(MemoryType.values)}")

    try:  # over stdio no request marks when the work began: the call does (``ltm.store.erase_gate``)
        with work_begun(work_begun_at()):
            result = memory_tool_save(namespace=identity.namespace, agent_id=identity.agent_id, content=content,
                                      memory_type=memory_type, source=Source.MCP,
                                      expires_at=expires_at)
    except UserDataErased as exc:
        raise McpError("your data was erased while this call ran; nothing was saved") from exc
    if "error" in result:
        raise McpError(f"{result['field']}: {result['error']}" if result.get("field") else result["error"])
    return result


def mcp_memory_list(
    *, identity: McpIdentity, memory_type: str | None = None, limit: int = 20, offset: int = 0
) -> dict[str, Any]:
    if memory_type and str(memory_type).upper() not in MemoryType.values:
        raise McpError(f"type: use one of {', '.join(MemoryType.values)}")
    if not 1 <= limit <= MAX_LIST:
        raise McpError(f"limit: between 1 and {MAX_LIST}")
    if offset < 0:
        raise McpError("offset: must not be negative")
    qs = current_items(filter_memories(_own(identity), memory_type=memory_type or None))
    rows = list(qs.order_by("-updated_at", "-id")[offset:offset + limit + 1])
    return {"items": [_item(m) for m in rows[:limit]], "more": len(rows) > limit}


def mcp_memory_delete(*, identity: McpIdentity, memory_id: str) -> dict[str, Any]:
    """Soft delete (``user_deleted``): restorable from "My memories" during the retention period."""
    actor = _require_write(identity)
    memory = _own(identity).filter(pk=memory_id, archived=False).first()
    if memory is None:
        raise McpError(f"id: no memory {memory_id!r}")
    memory_delete_for_user(memory=memory, actor=actor)
    return {"deleted": True, "id": memory.pk, "restorable_days": settings.MEMORYBOARD_DELETED_RETENTION_DAYS}


__all__ = [
    "MAX_LIST", "TOOL_SEARCH_MAX_K", "InvalidToken", "McpError", "McpIdentity", "identity_for_token",
    "mcp_memory_delete", "mcp_memory_list", "mcp_memory_save", "mcp_memory_search",
]
