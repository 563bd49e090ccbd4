"""The ReAct iteration of one turn (DESIGN 1.4).

(1) retrieve long-term memories, (2) inject them into the system prompt, (3) call the model (with the
memory tools when enabled) and run its tool calls, at most ``MAX_ITERATIONS`` model calls,
(4) queue the extraction of new memories, (5) persist the reply.

Steps (1)-(3) write nothing (:func:`turn_think`); what the turn writes is gathered and stored afterwards
in one short transaction (:func:`turn_commit`): on SQLite a write transaction holds the database's one
write lock, and a turn waits seconds on its model.
"""

from __future__ import annotations

import json
import logging
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memoryboard.agent.hooks import SummarizationHook
from memoryboard.agent.interceptors import ChainContext, ContextEditingInterceptor, run_before_model_chain
from memoryboard.agents_config import AgentConfig
from memoryboard.llm.errors import LLMError
from memoryboard.ltm.search.receipts import receipt_record
from memoryboard.ltm.search.results import ScoredMemory
from memoryboard.ltm.search.retrieval import (
    format_memory_block,
    memory_log_access,
    memory_retrieve_ranking,
    memory_switches,
)
from memoryboard.ltm.store.erase_gate import work_begun_at
from memoryboard.ltm.store.locks import NamespaceLockTimeout, namespace_lock
from memoryboard.ltm.write.extraction import secrets_withheld, should_skip_extraction
from memoryboard.ltm.write.tasks import extract_memories_task
from memoryboard.ltm.write.tools import BUSY, MEMORY_TOOLS, DeferredWrites, memory_tool_save_apply, run_memory_tool
from memoryboard.models import ChatMessage, MemoryAccess
from memoryboard.models.namespaces import Namespace, build_namespace
from memoryboard.strategies import Role, to_message
from memoryboard.strategies.formats import openai_message

logger = logging.getLogger(__name__)

MAX_ITERATIONS = 5
MEMORY_TOOL_NAMES = frozenset(tool["function"]["name"] for tool in MEMORY_TOOLS)

SYSTEM_PROMPT = (
    "You are {name}, a helpful assistant. Answer in the language of the user.\n"
    "你是{name}，一个乐于助人的助手。请使用用户的语言回答。"
)
TOOLS_HINT = (
    "When the user tells you something durable about themselves, save it with memory_save; "
    "use memory_search to look up what you know about the user."
)


class AgentLLMUnavailable(RuntimeError):
    """The chat model failed; ``reason`` is the short text of :class:`~memoryboard.llm.errors.LLMError`."""

    def __init__(self, reason: str, *, conversation_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.conversation_id = conversation_id


@dataclass
class TurnResult:
    reply: str
    reply_message_id: int | None
    memories_used: list[ScoredMemory] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    extraction: str = "skipped: not run"
    notes: list[str] = field(default_factory=list)
    # Calls of the caller's own tools (OpenAI dicts, arguments as the model wrote them): the turn ends
    # there and the caller runs them (the OpenAI-compatible endpoint returns them to its client).
    client_tool_calls: list[dict[str, Any]] = field(default_factory=list)


def default_before_model_steps(chat_model) -> list:
    """The runtime's before-model chain: ContextEditingInterceptor (30), SummarizationHook (50)."""
    return [ContextEditingInterceptor(), SummarizationHook(chat_model)]


def tool_names(tools: list[dict] | None) -> list[str]:
    """The function names of OpenAI tool specs."""
    return [str((tool.get("function") or {}).get("name")) for tool in tools or [] if isinstance(tool, dict)]


def agent_namespace(agent: AgentConfig, user_id: str) -> Namespace:
    """The only way the runtime builds a namespace: the agent's configuration and the server's user id."""
    return build_namespace(agent_namespace=agent.long_term_memory.namespace, user_id=str(user_id))


def retrieve_for_injection(*, agent: AgentConfig, user_id: str, query: str, conversation_id: str = "",
                           enabled: bool | None = None):
    """Step (1): the ranking of the user's items for ``query`` that a turn injects (the agent's
    ``load-max-items``), without touching the access statistics (the turn logs them when it commits).
    ``None`` when the user turned their memories off. "What the agent believes" shows the same."""
    return memory_retrieve_ranking(
        namespace=agent_namespace(agent, user_id), query=query, k=agent.long_term_memory.load_max_items,
        agent_id=agent.agent_id, conversation_id=conversation_id, kind=MemoryAccess.Kind.INJECTION,
        log_access=False, enabled=enabled,
    )


def build_system_prompt(agent: AgentConfig, memories: list[ScoredMemory]) -> str:
    parts = [SYSTEM_PROMPT.format(name=agent.name or agent.agent_id)]
    if agent.memory_tools and agent.long_term_memory.enabled:
        parts.append(TOOLS_HINT)
    block = format_memory_block(memories)
    if block:
        parts.append(block)
    return "\n\n".join(parts)


def history_messages(rows: list[ChatMessage]) -> list[dict]:
    """Stored rows as OpenAI messages, through the strategy package's one reader of stored rows.

    An assistant row whose ``metadata.tool_calls`` carry ids is replayed with its ``tool_calls``, and a TOOL
    row with ``metadata.tool_call_id`` as the ``tool`` message answering it. Only whole units are replayed:
    a tool row whose call is not in the history (cut off by the history limit, or stored without an id)
    is left out, and so are the calls of an assistant row whose results are missing (its text stays).
    """
    return history_with_positions(rows)[0]


def history_with_positions(rows: list) -> tuple[list[dict], list[int]]:
    """:func:`history_messages` and, for each message, the position of the row it came from."""
    msgs = [to_message(row) for row in rows]
    answered = {rid for m in msgs for rid in m.result_ids}
    called: set[str] = set()
    out: list[dict] = []
    positions: list[int] = []
    for position, m in enumerate(msgs):
        if m.role is Role.TOOL:
            if m.result_ids and m.result_ids[0] in called:
                out.append(openai_message(m))
                positions.append(position)
            continue
        if m.tool_calls:
            if all(c.id in answered for c in m.tool_calls):
                called.update(c.id for c in m.tool_calls)
            else:
                m = replace(m, tool_calls=())
        out.append(openai_message(m))
        positions.append(position)
    return out, positions


def _enqueue_extraction(
    agent: AgentConfig, user_id: str, conversation_id: str, turn: list[dict], history: list[dict],
    saving_enabled: bool | None = None,
) -> str:
    reason = should_skip_extraction(
        user_message=turn[0]["content"], conversation=history, agent_config=agent, user_id=user_id,
        saving_enabled=saving_enabled,
    )
    # A secret in the message (a password, a card number) is never stored: the outcome says so.
    withheld = secrets_withheld(turn[0]["content"])
    if reason:
        return f"skipped: {reason}" + (f"; {withheld}" if withheld else "")

    begun = work_begun_at() or timezone.now()
    extract_memories_task.enqueue(
        agent_id=agent.agent_id, user_id=str(user_id), conversation_id=conversation_id, conversation=turn,
        turn_at=begun.isoformat(),
    )
    return "queued" + (f"; {withheld}" if withheld else "")


@dataclass
class TurnDraft:
    """A turn up to its reply, written nothing yet: what :func:`turn_commit` stores."""

    agent: AgentConfig
    user_id: str
    conversation_id: str
    reply: str
    memories: list[ScoredMemory]
    tool_calls: list[dict[str, Any]]
    client_calls: list[dict[str, Any]]
    notes: list[str]
    writes: DeferredWrites
    extraction_turn: list[dict] | None
    history: list[dict]
    saving: bool | None


def run_turn(**turn) -> TurnResult:
    """:func:`turn_think`, then :func:`turn_commit` (same keyword arguments as :func:`turn_think`)."""
    return turn_commit(turn_think(**turn))


def turn_think(
    *,
    agent: AgentConfig,
    user_id: str,
    conversation_id: str,
    history: list[dict],
    user_message: str,
    chat_model,
    steps: list | None = None,
    turn_messages: list[dict] | None = None,
    client_tools: list[dict] | None = None,
) -> TurnDraft:
    """Run one turn of the ReAct iteration up to its reply, writing nothing: its writes (items saved by
    the memory tools, the retrievals' access log and receipts, the assistant row, the extraction) are
    gathered for :func:`turn_commit`, so no write transaction is open while the model is awaited.

    Args:
        agent: the agent's configuration.
        user_id: the platform user id of the authenticated caller (the namespace comes from it).
        conversation_id: the conversation.
        history: earlier messages of the conversation (OpenAI dicts), without the new user message.
        user_message: the new user message (already stored by the caller).
        chat_model: a :class:`~memoryboard.llm.chat.ChatModel`.
        steps: the before-model chain; default ContextEditingInterceptor + SummarizationHook(chat_model).
        turn_messages: the new messages of the turn as the model sees them (default: ``user_message`` as
            one user message); ``user_message`` is then the retrieval query. A turn without a user
            message (tool results of the caller's tools) extracts nothing.
        client_tools: the caller's own tools (OpenAI specs), offered next to the memory tools; a reply
            calling one ends the turn with ``client_tool_calls`` (memory calls in it are still run).

    Returns:
        The reply and what the turn is to write.

    Raises:
        AgentLLMUnavailable: when a model call fails; nothing of the reply is stored.
    """
    ltm = agent.long_term_memory
    namespace = agent_namespace(agent, user_id)
    writes = DeferredWrites()
    memories: list[ScoredMemory] = []
    context = ChainContext(agent=agent, conversation_id=conversation_id)
    # The user's two switches in one query, when the turn reads both (retrieval, the extraction filter).
    using, saving = memory_switches(namespace.user_id) if ltm.enabled and ltm.auto_load and ltm.auto_extract else (None, None)
    if ltm.enabled and ltm.auto_load:
        kind = MemoryAccess.Kind.INJECTION
        try:
            ranking = retrieve_for_injection(agent=agent, user_id=user_id, query=user_message,
                                             conversation_id=conversation_id, enabled=using)
        except LLMError as exc:
            # Without the embedding endpoint the agent still answers, only without its memories.
            logger.warning("long-term memory retrieval failed: %s", exc.reason)
            context.notes.append(_("memories not loaded: embeddings unavailable (%(reason)s)") % {"reason": exc.reason})
        else:
            if ranking is not None:
                memories = ranking.results
                writes.retrievals.append((ranking, kind, agent.agent_id, conversation_id))
    if steps is None:
        steps = default_before_model_steps(chat_model)
    messages = [{"role": "system", "content": build_system_prompt(agent, memories)}]
    if turn_messages is None:
        turn_messages = [{"role": "user", "content": user_message}]
    messages = run_before_model_chain(steps, messages + history + turn_messages, context)
    memory_tools = MEMORY_TOOLS if (agent.memory_tools and ltm.enabled) else []
    tools = (memory_tools + list(client_tools or [])) or None
    client_names = {name for name in tool_names(client_tools) if not (memory_tools and name in MEMORY_TOOL_NAMES)}

    tool_calls: list[dict[str, Any]] = []
    client_calls: list[dict[str, Any]] = []
    reply_text = ""
    for iteration in range(MAX_ITERATIONS):
        offer = tools if iteration < MAX_ITERATIONS - 1 else None  # the last call must answer in text
        try:
            reply = chat_model.complete(messages, tools=offer)
        except LLMError as exc:
            raise AgentLLMUnavailable(exc.reason) from exc
        if not reply.tool_calls or not offer:
            reply_text = reply.content
            break
        client_calls = [call.to_dict(raw=True) for call in reply.tool_calls if call.name in client_names]
        messages.append(reply.to_message())
        for call in reply.tool_calls:
            if call.name in client_names:
                continue
            if call.error:
                result: dict[str, Any] = {"error": call.error}
            else:
                result = run_memory_tool(
                    name=call.name, arguments=call.arguments, namespace=namespace,
                    agent_id=agent.agent_id, conversation_id=conversation_id, defer=writes,
                )
            # The model sees the result now; a planned save's dict becomes what was stored at commit.
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result, ensure_ascii=False)})
            tool_calls.append({"name": call.name, "arguments": call.arguments, "result": result})
        if client_calls:
            reply_text = reply.content
            break

    has_user = any(str(m.get("role", "")).lower() == "user" for m in turn_messages)
    return TurnDraft(
        agent=agent, user_id=str(user_id), conversation_id=conversation_id, reply=reply_text, memories=memories,
        tool_calls=tool_calls, client_calls=client_calls, notes=context.notes, writes=writes,
        extraction_turn=[{"role": "user", "content": user_message}, {"role": "assistant", "content": reply_text}]
        if has_user else None,
        history=history, saving=saving,
    )


def turn_commit(draft: TurnDraft, *, before=None, after=None, savepoint: bool = True) -> TurnResult:
    """Store a drafted turn in one short transaction: ``before()`` first (the caller's own writes of the
    turn), ``after()`` last (reads what the turn wrote, before anyone else writes), the items its tools planned (re-checked for duplicates and the user's switch, under the
    namespace lock, taken before the transaction and held until after the commit), its retrievals' access
    log and receipts, and the assistant row; then the extraction is queued.

    Raises:
        django.db.OperationalError: the database failed or stayed locked; nothing of the turn is stored.
    """
    agent, writes = draft.agent, draft.writes
    with ExitStack() as locks:
        try:
            for namespace in writes.namespaces():
                locks.enter_context(namespace_lock(namespace))
            locked = True
        except NamespaceLockTimeout:
            locks.close()
            locked = False
        with transaction.atomic(savepoint=savepoint):
            if before is not None:
                before()
            for plan in writes.saves:
                if locked:
                    memory_tool_save_apply(plan, use_judge=False)
                else:
                    plan.result.clear()
                    plan.result.update({"saved": False, "error": BUSY})
            for ranking, kind, agent_id, conversation_id in writes.retrievals:
                memory_log_access(ranking.results, agent_id=agent_id, conversation_id=conversation_id, kind=kind)
                receipt_record(ranking=ranking, agent_id=agent_id, user_id=draft.user_id,
                               conversation_id=conversation_id, kind=kind)
            tool_calls, client_calls, memories = draft.tool_calls, draft.client_calls, draft.memories
            row = ChatMessage.objects.create(
                conversation_id=draft.conversation_id,
                agent_id=agent.agent_id,
                user_id=draft.user_id,
                role=ChatMessage.Role.ASSISTANT,
                content=draft.reply,
                metadata={
                    # Memory calls are records (no id: answered inside the turn); the caller's calls keep
                    # their OpenAI shape and id, so the TOOL rows that answer them later pair with them.
                    "tool_calls": tool_calls + client_calls,
                    "memories_used": [item.memory.pk for item in memories],
                } if (tool_calls or memories or client_calls) else None,
            )
            if after is not None:
                after()
    # After the commit: the extraction reads the stored turn, and may call a model itself (inline tasks).
    if draft.extraction_turn is not None:
        extraction = _enqueue_extraction(agent, draft.user_id, draft.conversation_id, draft.extraction_turn,
                                         draft.history, draft.saving)
    else:
        extraction = "skipped: no new user message"
    return TurnResult(
        reply=draft.reply, reply_message_id=row.pk, memories_used=memories, tool_calls=tool_calls,
        extraction=extraction, notes=draft.notes, client_tool_calls=client_calls,
    )
