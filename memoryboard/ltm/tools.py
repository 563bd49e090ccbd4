"""Write channel B: the agent's tools ``memory_save`` and ``memory_search`` (OpenAI tool definitions).

The namespace always comes from the server (the authenticated user and the agent's configuration).
Whatever the model puts in the arguments (``_userId``, ``_namespace``, ``namespace``, ``userId``, ...)
is ignored: only ``content``/``type`` and ``query``/``k`` are read.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

from django.db import transaction

from memoryboard.ltm.config import get_agents_config
from memoryboard.ltm.lifecycle import memory_enforce_limit
from memoryboard.jsonguard import JSONGuardError, check_json_value
from memoryboard.ltm.locks import NamespaceLockTimeout, namespace_lock
from memoryboard.ltm.namespaces import Namespace
from memoryboard.ltm.selectors import namespace_q
from memoryboard.ltm.retrieval import memory_retrieve
from memoryboard.ltm.services import MemoryError
from memoryboard.models import LongTermMemory, MemoryAccess, MemoryType, Source, UserMemorySettings

TOOL_SEARCH_DEFAULT_K = 5
TOOL_SEARCH_MAX_K = 20

MEMORY_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "memory_save",
            "description": (
                "Save one durable fact, preference, procedure or episode about the user to long-term memory. "
                "Use a short, self-contained sentence."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The memory, one sentence."},
                    "type": {
                        "type": "string",
                        "enum": list(MemoryType.values),
                        "description": "FACT (stable), PREFERENCE (may change), PROCEDURE (may expire), "
                        "EPISODE (time-bound).",
                    },
                    "expires_at": {
                        "type": "string",
                        "description": "Optional: when this stops being true or useful (ISO 8601 date or time).",
                    },
                },
                "required": ["content", "type"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_search",
            "description": "Search the user's long-term memory for items relevant to a query.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "k": {"type": "integer", "minimum": 1, "maximum": TOOL_SEARCH_MAX_K,
                          "description": "How many items at most (default 5)."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
]

_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = "。.!！?？;；,，:： \t\n"


def normalize_content(text: str) -> str:
    """The form compared by the substring dedup: case-folded, single spaces, no end punctuation."""
    return _SPACES.sub(" ", str(text)).strip(_EDGE_PUNCT).casefold()


def find_duplicate(namespace: Namespace, content: str) -> str | None:
    """The id of an active item whose content contains, or is contained in, ``content``."""
    new = normalize_content(content)
    if not new:
        return None
    rows = LongTermMemory.objects.filter(namespace_q(namespace), archived=False).values_list(
        "pk", "value_json"
    )
    for pk, value in rows:
        old = normalize_content((value or {}).get("content", ""))
        if old and (old in new or new in old):
            return pk
    return None


def deterministic_id(namespace: Namespace, content: str) -> str:
    """The id a tool save gets: identical saves in one namespace collapse into one row even without a lock."""
    digest = hashlib.sha256(f"{namespace.key()}\n{normalize_content(content)}".encode()).hexdigest()
    return "t" + digest[:31]


def memory_saving_enabled(user_id: str) -> bool:
    """The user's "save new memories" switch (on unless turned off)."""
    value = UserMemorySettings.objects.filter(user_id=user_id).values_list("save_memories", flat=True).first()
    return value is not False


def _max_items(agent_id: str) -> int | None:
    config = get_agents_config().get(agent_id)
    return config.long_term_memory.max_items if config else None


def memory_tool_save(
    *, namespace: Namespace, agent_id: str, content: Any, memory_type: Any, conversation_id: str = "",
    source: str = Source.AGENT_TOOL, expires_at: Any = None,
) -> dict[str, Any]:
    """Synchronous save through the reconcile step (``ltm.reconcile``: a repeat is not saved again, an
    update supersedes the old item), under the namespace lock; then the item limit.

    ``source`` is ``agent_tool`` for the agent's own tool, ``mcp`` for the MCP server's ``memory_save``.

    Returns:
        ``{"saved": true, "id": ...}`` (with ``superseded`` or ``conflict_with`` ids when the reconcile
        step decided so, ``pending_review`` and ``expires_at`` when they apply),
        ``{"saved": false, "duplicate_of": id}``, ``{"saved": false, "reason": ...}`` or
        ``{"saved": false, "error": ..., "field": ...}``.
    """
    if not isinstance(content, str) or not content.strip():
        return {"saved": False, "error": "content must be a non-empty string", "field": "content"}
    memory_type = str(memory_type or MemoryType.FACT).upper()
    if not memory_saving_enabled(namespace.user_id):
        return {"saved": False, "reason": "the user turned off saving new memories"}
    try:
        return _save_locked(namespace=namespace, agent_id=agent_id, content=content, memory_type=memory_type,
                            conversation_id=conversation_id, source=source, expires_at=expires_at)
    except NamespaceLockTimeout:
        return {"saved": False, "error": "memory is busy, try again"}


def _save_locked(
    *, namespace: Namespace, agent_id: str, content: str, memory_type: str, source: str, conversation_id: str = "",
    expires_at: Any = None,
) -> dict[str, Any]:
    from memoryboard.ltm.reconcile import SAME, memory_reconcile_write
    from memoryboard.ltm.services import memory_build

    try:
        memory = memory_build(namespace=namespace, content=content, memory_type=memory_type, source=source,
                              agent_id=agent_id, conversation_id=conversation_id,
                              expires_at=expires_at if expires_at not in ("", None) else None)
    except MemoryError as exc:
        return {"saved": False, "error": exc.message, "field": exc.field}
    with namespace_lock(namespace):
        memory_id = deterministic_id(namespace, content)
        if not LongTermMemory.objects.filter(pk=memory_id).exists():
            memory.pk = memory.key_name = memory_id  # else an archived item with the same content: a new id
        with transaction.atomic():
            outcome = memory_reconcile_write(namespace=namespace, memory=memory)
        if outcome.decision.verdict == SAME:
            return {"saved": False, "duplicate_of": outcome.memory.pk}
        max_items = _max_items(agent_id)
        archived = memory_enforce_limit(namespace=namespace, max_items=max_items) if max_items else []
    saved = outcome.memory
    result: dict[str, Any] = {"saved": True, "id": saved.pk, "type": saved.memory_type}
    if outcome.superseded:
        result["superseded"] = outcome.superseded
    if outcome.conflicts:
        result["conflict_with"] = outcome.conflicts
    if saved.archived_reason == "pending_review":
        result["pending_review"] = True
    if saved.value_json.get("expiresAt"):
        result["expires_at"] = saved.value_json["expiresAt"]
    if archived:
        result["archived_over_limit"] = archived
    return result


def memory_tool_search(
    *, namespace: Namespace, agent_id: str, conversation_id: str, query: Any, k: Any
) -> dict[str, Any]:
    """The ``memory_search`` tool: retrieval in the caller's namespace, logged as ``tool_search``."""
    if not isinstance(query, str) or not query.strip():
        return {"error": "query must be a non-empty string", "field": "query", "results": []}
    try:
        k = int(k) if k is not None else TOOL_SEARCH_DEFAULT_K
    except (TypeError, ValueError):
        k = TOOL_SEARCH_DEFAULT_K
    k = max(1, min(k, TOOL_SEARCH_MAX_K))
    items = memory_retrieve(
        namespace=namespace, query=query, k=k, agent_id=agent_id,
        conversation_id=conversation_id, kind=MemoryAccess.Kind.TOOL_SEARCH, receipt=True,
    )
    return {"results": [item.to_dict() for item in items]}


def _embedding_errors(func):
    """Report a failing embedding endpoint to the model as a tool result instead of failing the turn."""

    @functools.wraps(func)
    def wrapper(**kwargs):
        from memoryboard.llm.errors import LLMError

        try:
            return func(**kwargs)
        except LLMError as exc:
            return {"error": f"long-term memory is unavailable ({exc.reason})"}

    return wrapper


@_embedding_errors
def run_memory_tool(
    *, name: str, arguments: dict, namespace: Namespace, agent_id: str, conversation_id: str = ""
) -> dict[str, Any]:
    """Execute a memory tool call of the model.

    Args:
        name: ``memory_save`` or ``memory_search``.
        arguments: the model's arguments; only the documented keys are read.
        namespace: from the server, never from ``arguments``.
        agent_id: the calling agent.
        conversation_id: for the access log, and the source of a saved item.

    Returns:
        A JSON-serializable result for the ``tool`` message; errors are reported in it, not raised.
    """
    arguments = arguments if isinstance(arguments, dict) else {}
    try:
        check_json_value(arguments, field="arguments")  # depth, finite numbers, lone surrogates
    except JSONGuardError as exc:
        return {"error": exc.message, "field": exc.field}
    if name == "memory_save":
        return memory_tool_save(
            namespace=namespace, agent_id=agent_id,
            content=arguments.get("content"), memory_type=arguments.get("type"), conversation_id=conversation_id,
            expires_at=arguments.get("expires_at"),
        )
    if name == "memory_search":
        return memory_tool_search(
            namespace=namespace, agent_id=agent_id, conversation_id=conversation_id,
            query=arguments.get("query"), k=arguments.get("k"),
        )
    return {"error": f"unknown tool {name!r}"}
