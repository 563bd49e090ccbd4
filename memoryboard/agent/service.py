"""``agent_chat``: one turn of an agent for an authenticated user, as the API runs it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError, transaction

from memoryboard.agent.runtime import (
    AgentLLMUnavailable,
    TurnResult,
    agent_namespace,
    history_messages,
    turn_commit,
    turn_think,
)
from memoryboard.agents_config import get_agents_config
from memoryboard.conversations import conversation_claim
from memoryboard.llm.factory import get_chat_model
from memoryboard.ltm.store.erase_gate import erase_gate_pass
from memoryboard.ltm.store.rehearsal import Outcome, outcome_between, snapshot
from memoryboard.ltm.store.selectors import namespace_q
from memoryboard.models import ChatMessage, LongTermMemory
from memoryboard.roles import may_write_memories_of, platform_user_id

# Earlier messages read into a turn; the context strategy trims them further.
HISTORY_LIMIT = 500

__all__ = [
    "AgentChatResult", "AgentLLMUnavailable", "AgentNotFound", "AgentStoreUnavailable", "ConversationNotYours",
    "agent_chat",
]


class AgentNotFound(LookupError):
    def __init__(self, agent_id: str) -> None:
        super().__init__(f"Unknown agent {agent_id!r}.")
        self.agent_id = agent_id


class ConversationNotYours(LookupError):
    """The conversation id belongs to another user or agent (reported like a missing one)."""


def turn_start(*, agent_id: str, user, conversation_id: str | None):
    """What every agent turn starts from: the configured agent, the caller's platform user id, and the
    conversation id (a new one when none is given: ``fresh``).

    Raises:
        AgentNotFound: the agent is not configured.
    """
    agent = get_agents_config().get(agent_id)
    if agent is None:
        raise AgentNotFound(agent_id)
    user_id = platform_user_id(user)
    # A turn writes the caller's conversation and, through tools and extraction, their memories.
    if not may_write_memories_of(user, owner_user_id=user_id):
        raise PermissionDenied("Your role may not write memories.")
    fresh = not conversation_id
    return agent, user_id, conversation_id or uuid.uuid4().hex, fresh


def conversation_rows_of(*, conversation_id: str, user_id: str, agent_id: str, fresh: bool = False):
    """Claim the conversation for this user and agent (or find it theirs) and return its stored rows
    (``fresh``: an id the server just made up, see :func:`conversation_claim`).

    Raises:
        ConversationNotYours: the id is used by another user or agent.
    """
    # An atomic claim (one INSERT) decides the owner, whatever the timing; the history is read by owner.
    if not conversation_claim(conversation_id=conversation_id, user_id=user_id, agent_id=agent_id, fresh=fresh):
        raise ConversationNotYours(conversation_id)
    return ChatMessage.objects.filter(conversation_id=conversation_id, user_id=user_id, agent_id=agent_id)


class AgentStoreUnavailable(RuntimeError):
    """The database failed during the turn, after the user's message was stored: the turn's writes
    (items saved by tools, the assistant row) were rolled back together; the message is kept."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"database unavailable during the turn of {conversation_id}")
        self.conversation_id = conversation_id


def run_turn_atomic(*, conversation_id: str, savepoint: bool = True, before_commit=None, after_writes=None,
                    **turn) -> TurnResult:
    """:func:`run_turn` with the turn's writes (items saved by its tool calls, the assistant row) in one
    short transaction after the model has answered (:func:`turn_commit`); its errors name the
    conversation. ``before_commit``: the caller's own writes of the turn, run first in that transaction,
    after the erase gate (``ltm.store.erase_gate``; the caller need not pass it again). ``after_writes``: run
    last in that transaction (reads what the turn wrote).
    ``savepoint=False`` when the transaction is the outermost one anyway (no SAVEPOINT round trips).

    Raises:
        AgentLLMUnavailable: the model failed (``conversation_id`` set).
        AgentStoreUnavailable: the database failed (or stayed locked); the turn's writes were rolled back.
    """
    try:
        draft = turn_think(conversation_id=conversation_id, **turn)
        user_id = turn["user_id"]

        def before() -> None:
            # The turn's rows (reply, receipt, items) are refused if the user was erased meanwhile.
            erase_gate_pass(user_ids=[user_id])
            if before_commit is not None:
                before_commit()

        return turn_commit(draft, before=before, after=after_writes, savepoint=savepoint)
    except AgentLLMUnavailable as exc:
        exc.conversation_id = conversation_id
        raise
    except (OperationalError, InterfaceError) as exc:
        raise AgentStoreUnavailable(conversation_id) from exc


@dataclass
class AgentChatResult:
    conversation_id: str
    reply: str
    memories_used: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    extraction: str = ""
    message_id: int | None = None
    reply_message_id: int | None = None
    # What the turn changed in the user's memory (:func:`memory_changes`); the extraction, queued after
    # the reply, is not in it (``extraction`` says it was queued).
    memory_changes: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "reply": self.reply,
            "memories_used": self.memories_used,
            "tool_calls": self.tool_calls,
            "extraction": self.extraction,
            "memory_changes": self.memory_changes,
        }


def memory_changes(outcome: Outcome) -> list[dict[str, Any]]:
    """A turn's changes to memory, one entry per item, for a client's "Memory updated": ``saved`` (in use),
    ``pending`` (waits for review), ``replaced`` (no longer used; ``replaced_by`` names the item that took its
    place), ``updated`` (reworded), ``forgotten`` (no longer used, nothing in its place) and ``restored``."""
    def one(change: str, item, **extra) -> dict[str, Any]:
        return {"change": change, "id": item.id, "content": item.content, "type": item.type, "state": item.state,
                **extra}

    out = [one("pending" if item.state == "pending_review" else "saved", item) for item in outcome.created]
    out += [one("replaced", old, replaced_by=new.id) for old, new in outcome.replaced]
    out += [one("updated", after, before=before.content) for before, after in outcome.changed]
    out += [one("forgotten", item) for item in [*outcome.lost, *outcome.removed]]
    out += [one("restored", item) for item in outcome.restored]
    return out


def agent_chat(*, user, agent_id: str, conversation_id: str | None, message: str, chat_model=None) -> AgentChatResult:
    """Store the user's message (committed first), then run the agent's turn.

    Args:
        user: the authenticated Django user; the namespace and user id come from it.
        agent_id: an agent of agents.yaml.
        conversation_id: an existing conversation of this user and agent, a new id, or None for a new one.
        message: the user's message.
        chat_model: default ``factory.get_chat_model()``.

    Returns:
        The reply and what the turn did.

    Raises:
        AgentNotFound: the agent is not configured.
        ConversationNotYours: the conversation id is used by another user or agent.
        AgentLLMUnavailable: the model failed; the user's message stays stored.
        AgentStoreUnavailable: the database failed after the user's message was stored.
    """
    agent, user_id, conversation_id, fresh = turn_start(agent_id=agent_id, user=user, conversation_id=conversation_id)
    rows = conversation_rows_of(conversation_id=conversation_id, user_id=user_id, agent_id=agent.agent_id, fresh=fresh)
    history_rows = [] if fresh else list(rows.order_by("-id")[:HISTORY_LIMIT])[::-1]
    # Saved on its own before anything can fail: the message is never lost (unless the user was erased
    # after the request began: then it is refused).
    with transaction.atomic():
        erase_gate_pass(user_ids=[user_id])
        stored = ChatMessage.objects.create(
            conversation_id=conversation_id, agent_id=agent.agent_id, user_id=user_id,
            role=ChatMessage.Role.USER, content=message,
        )
    if chat_model is None:
        chat_model = get_chat_model()
    namespace = agent_namespace(agent, user_id)
    before: dict = {}

    def scope():
        return LongTermMemory.objects.filter(namespace_q(namespace))

    changes: list[dict[str, Any]] = []

    def read_before() -> None:  # in the turn's write transaction, before its writes
        before.update(snapshot(scope()))

    def read_after() -> None:  # in it too, after them: the turn's changes, no one else's
        changes.extend(memory_changes(outcome_between(before, snapshot(scope()))))

    turn = run_turn_atomic(
        agent=agent, user_id=user_id, conversation_id=conversation_id, before_commit=read_before,
        after_writes=read_after, history=history_messages(history_rows), user_message=message, chat_model=chat_model,
    )
    return AgentChatResult(
        conversation_id=conversation_id,
        reply=turn.reply,
        memories_used=[item.to_dict() for item in turn.memories_used],
        tool_calls=turn.tool_calls,
        extraction=turn.extraction,
        message_id=stored.pk,
        reply_message_id=turn.reply_message_id,
        memory_changes=changes,
    )
