"""Write channel B: the agent's tools ``memory_save`` and ``memory_search`` (OpenAI tool definitions).

The namespace always comes from the server (the authenticated user and the agent's configuration).
Whatever the model puts in the arguments (``_userId``, ``_namespace``, ``namespace``, ``userId``, ...)
is ignored: only ``content``/``type`` and ``query``/``k`` are read.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from memoryboard.agents_config import get_agents_config
from memoryboard.jsonguard import JSONGuardError, check_json_value
from memoryboard.llm.errors import LLMError
from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.search.retrieval import memory_retrieve_ranking
from memoryboard.ltm.store.items import MemoryError, normalize_content
from memoryboard.ltm.store.lifecycle import memory_enforce_limit
from memoryboard.ltm.store.locks import NamespaceLockTimeout, namespace_lock
from memoryboard.ltm.store.selectors import namespace_q
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.write.reconcile import SAME, memory_reconcile_write, reconcile_prejudge, shared_embedder
from memoryboard.models import LongTermMemory, MemoryAccess, MemoryType, Source, UserMemorySettings
from memoryboard.models.namespaces import Namespace

TOOL_SEARCH_DEFAULT_K = 5
TOOL_SEARCH_MAX_K = 20
SAVING_OFF = "the user turned off saving new memories"
BUSY = "memory is busy, try again"

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


@dataclass
class PlannedSave:
    """A ``memory_save`` decided while an agent turn waits for its model, stored in the turn's write phase.

    ``result`` is the dict the model was shown; :func:`memory_tool_save_apply` turns it into what was
    stored (in place: the turn's tool-call records hold the same dict). ``judged``: the reconcile judge's
    decision, taken online in the think phase (``reconcile.reconcile_prejudge``).
    """

    namespace: Namespace
    agent_id: str
    memory: LongTermMemory
    vector: Any
    result: dict[str, Any]
    judged: Any = None

    def embedder(self, embedder=None):
        """The embedder (default the configured one) knowing this item's vector already: the write phase
        calls no embedding endpoint for it."""
        shared = shared_embedder(embedder)
        shared.remember(self.memory.content, self.vector)
        return shared


@dataclass
class DeferredWrites:
    """The writes of an agent turn gathered while it waits for the model: items its tools save, and the
    access statistics and receipts of its retrievals. Applied in one short transaction (the turn's write
    phase), so no write lock is held while the model thinks.
    """

    saves: list[PlannedSave] = field(default_factory=list)
    # (ranking, kind, agent_id, conversation_id): logged and given a receipt in the write phase.
    retrievals: list[tuple[Any, str, str, str]] = field(default_factory=list)

    def namespaces(self) -> list[Namespace]:
        """The namespaces whose lock the write phase holds (each once, in a fixed order)."""
        by_key = {plan.namespace.key(): plan.namespace for plan in self.saves}
        return [by_key[key] for key in sorted(by_key)]


def memory_tool_save_plan(
    *, namespace: Namespace, agent_id: str, content: Any, memory_type: Any, conversation_id: str = "",
    source: str = Source.AGENT_TOOL, pending: list[PlannedSave] = (), embedder=None, expires_at: Any = None,
) -> tuple[dict[str, Any], PlannedSave | None]:
    """The reads and the embedding of a save, without writing: the result the model is shown and the
    plan :func:`memory_tool_save_apply` stores (None when nothing is to be stored).

    ``pending``: saves planned earlier in the same turn, not stored yet (a repeated save is their duplicate).

    Raises:
        LLMError: the embedding endpoint failed.
    """
    if not isinstance(content, str) or not content.strip():
        return {"saved": False, "error": "content must be a non-empty string", "field": "content"}, None
    memory_type = str(memory_type or MemoryType.FACT).upper()
    if not memory_saving_enabled(namespace.user_id):
        return {"saved": False, "reason": SAVING_OFF}, None
    new = normalize_content(content)
    for plan in pending:
        old = normalize_content(plan.memory.content)
        if plan.namespace.key() == namespace.key() and old and new and (old in new or new in old):
            return {"saved": False, "duplicate_of": plan.memory.pk}, None
    duplicate = find_duplicate(namespace, content)
    if duplicate:
        return {"saved": False, "duplicate_of": duplicate}, None
    memory_id = deterministic_id(namespace, content)
    if LongTermMemory.objects.filter(pk=memory_id).exists():
        memory_id = None  # an archived item with the same content: keep it, save a new one
    try:
        memory = memory_build(
            namespace=namespace, content=content, memory_type=memory_type,
            source=source, agent_id=agent_id, memory_id=memory_id, conversation_id=conversation_id,
            expires_at=expires_at if expires_at not in ("", None) else None,
        )
    except MemoryError as exc:
        return {"saved": False, "error": exc.message, "field": exc.field}, None
    if embedder is None:
        embedder = get_embedder()
    vector = embedder.embed([memory.content])[0]
    result: dict[str, Any] = {"saved": True, "id": memory.pk, "type": memory.memory_type}
    if memory.archived_reason == "pending_review":
        result["pending_review"] = True
    if memory.value_json.get("expiresAt"):
        result["expires_at"] = memory.value_json["expiresAt"]
    return result, PlannedSave(namespace=namespace, agent_id=agent_id, memory=memory, vector=vector, result=result)


def memory_tool_save_apply(plan: PlannedSave, *, embedder=None, use_judge: bool = True) -> dict[str, Any]:
    """Store a planned save through the reconcile step (``ltm.write.reconcile``: a repeat is not saved again, an
    update supersedes the old item), re-checking the user's saving switch; then the item limit. Run it in a
    transaction, under the namespace's lock. Returns (and writes into ``plan.result``) what was stored.
    ``use_judge=False`` in an agent turn's write phase: no model call while the write lock is held; the
    decision the judge took in the think phase (``plan.judged``) is followed if the candidates are still
    the same, else the offline rules decide.
    """
    namespace, memory = plan.namespace, plan.memory
    if not memory_saving_enabled(namespace.user_id):
        result: dict[str, Any] = {"saved": False, "reason": SAVING_OFF}
    else:
        if LongTermMemory.objects.filter(pk=memory.pk).exists():
            memory.pk = memory.key_name = uuid.uuid4().hex  # archived meanwhile with the same content
        outcome = memory_reconcile_write(namespace=namespace, memory=memory, embedder=plan.embedder(embedder),
                                         use_judge=use_judge, judged=plan.judged)
        saved = outcome.memory
        if outcome.decision.verdict == SAME:
            result = {"saved": False, "duplicate_of": saved.pk}
        else:
            max_items = _max_items(plan.agent_id)
            archived = memory_enforce_limit(namespace=namespace, max_items=max_items) if max_items else []
            result = {"saved": True, "id": saved.pk, "type": saved.memory_type}
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
    plan.result.clear()
    plan.result.update(result)
    return plan.result


def memory_tool_save(
    *, namespace: Namespace, agent_id: str, content: Any, memory_type: Any, conversation_id: str = "",
    source: str = Source.AGENT_TOOL, expires_at: Any = None,
) -> dict[str, Any]:
    """Synchronous save through the reconcile step, under the namespace lock, stored in one transaction with
    the item limit.

    ``source`` is ``agent_tool`` for the agent's own tool, ``mcp`` for the MCP server's ``memory_save``.

    Returns:
        ``{"saved": true, "id": ...}`` (with ``superseded`` or ``conflict_with`` ids when the reconcile
        step decided so, ``pending_review`` and ``expires_at`` when they apply),
        ``{"saved": false, "duplicate_of": id}``, ``{"saved": false, "reason": ...}`` or
        ``{"saved": false, "error": ..., "field": ...}``.
    """
    try:
        with namespace_lock(namespace):
            result, plan = memory_tool_save_plan(namespace=namespace, agent_id=agent_id, content=content,
                                                 memory_type=memory_type, conversation_id=conversation_id,
                                                 source=source, expires_at=expires_at)
            if plan is None:
                return result
            with transaction.atomic():
                return memory_tool_save_apply(plan)
    except NamespaceLockTimeout:
        return {"saved": False, "error": BUSY}


def memory_tool_search(
    *, namespace: Namespace, agent_id: str, conversation_id: str, query: Any, k: Any,
    defer: DeferredWrites | None = None,
) -> dict[str, Any]:
    """The ``memory_search`` tool: retrieval in the caller's namespace, logged as ``tool_search``
    (``defer``: the log and the receipt are written in the turn's write phase)."""
    if not isinstance(query, str) or not query.strip():
        return {"error": "query must be a non-empty string", "field": "query", "results": []}
    try:
        k = int(k) if k is not None else TOOL_SEARCH_DEFAULT_K
    except (TypeError, ValueError):
        k = TOOL_SEARCH_DEFAULT_K
    k = max(1, min(k, TOOL_SEARCH_MAX_K))
    kind = MemoryAccess.Kind.TOOL_SEARCH
    ranking = memory_retrieve_ranking(
        namespace=namespace, query=query, k=k, agent_id=agent_id,
        conversation_id=conversation_id, kind=kind, receipt=defer is None, log_access=defer is None,
    )
    if ranking is not None and defer is not None:
        defer.retrievals.append((ranking, kind, agent_id, conversation_id))
    items = [] if ranking is None else ranking.results
    return {"results": [item.to_dict() for item in items]}


def _embedding_errors(func):
    """Report a failing embedding endpoint to the model as a tool result instead of failing the turn."""

    @functools.wraps(func)
    def wrapper(**kwargs):
        try:
            return func(**kwargs)
        except LLMError as exc:
            return {"error": f"long-term memory is unavailable ({exc.reason})"}

    return wrapper


@_embedding_errors
def run_memory_tool(
    *, name: str, arguments: dict, namespace: Namespace, agent_id: str, conversation_id: str = "",
    defer: DeferredWrites | None = None,
) -> dict[str, Any]:
    """Execute a memory tool call of the model (``defer``: plan its writes for the turn's write phase).

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
    if name == "memory_save" and defer is not None:
        result, plan = memory_tool_save_plan(
            namespace=namespace, agent_id=agent_id, content=arguments.get("content"),
            memory_type=arguments.get("type"), conversation_id=conversation_id, pending=defer.saves,
            expires_at=arguments.get("expires_at"),
        )
        if plan is not None:
            # Online, the judge decides now, while the turn waits on models anyway (no transaction open).
            plan.judged = reconcile_prejudge(namespace=namespace, memory=plan.memory, embedder=plan.embedder())
            defer.saves.append(plan)
        return result
    if name == "memory_save":
        return memory_tool_save(
            namespace=namespace, agent_id=agent_id,
            content=arguments.get("content"), memory_type=arguments.get("type"), conversation_id=conversation_id,
            expires_at=arguments.get("expires_at"),
        )
    if name == "memory_search":
        return memory_tool_search(
            namespace=namespace, agent_id=agent_id, conversation_id=conversation_id,
            query=arguments.get("query"), k=arguments.get("k"), defer=defer,
        )
    return {"error": f"unknown tool {name!r}"}
