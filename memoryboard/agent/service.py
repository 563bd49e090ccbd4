"""``agent_chat``: one turn of an agent for an authenticated user, as the API runs it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError, transaction

from memoryboard.agent.runtime import AgentLLMUnavailable, TurnResult, history_messages, turn_commit, turn_think
from memoryboard.agents_config import get_agents_config
from memoryboard.conversations import conversation_claim
from memoryboard.llm.factory import get_chat_model
from memoryboard.ltm.store.erase_gate import erase_gate_pass
from memoryboard.models import ChatMessage
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


def run_turn_atomic(*, conversation_id: str, savepoint: bool = True, before_commit=None, **turn) -> TurnResult:
    """:func:`run_turn` with the turn's writes (items saved by its tool calls, the assistant row) in one
    short transaction after the model has answered (:func:`turn_commit`); its errors name the
    conversation. ``before_commit``: the caller's own writes of the turn, run first in that transaction,
    after the erase gate (``ltm.store.erase_gate``; the caller need not pass it again).
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

        return turn_commit(draft, before=before, savepoint=savepoint)
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "reply": self.reply,
            "memories_used": self.memories_used,
            "tool_calls": self.tool_calls,
            "extraction": self.extraction,
        }


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
    turn = run_turn_atomic(
        agent=agent, user_id=user_id, conversation_id=conversation_id,
        history=history_messages(history_rows), user_message=message, chat_model=chat_model,
    )
    return AgentChatResult(
        conversation_id=conversation_id,
        reply=turn.reply,
        memories_used=[item.to_dict() for item in turn.memories_used],
        tool_calls=turn.tool_calls,
        extraction=turn.extraction,
        message_id=stored.pk,
        reply_message_id=turn.reply_message_id,
    )
