"""``chat_completion``: one OpenAI Chat Completions request run as a turn of the agent runtime.

The client of an OpenAI-compatible endpoint sends the whole conversation on every request. Its
messages are what the model sees (after the runtime's own system prompt with the long-term memory
block and the before-model chain); what is new in this request, the messages after the last assistant
message (the user's message, or the results of the client's own tool calls), is stored in
``chat_message`` with the reply, in the turn's write transaction (after the model answered); when the
turn fails, on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import transaction

from memoryboard.agent.runtime import AgentLLMUnavailable, TurnResult
from memoryboard.agent.service import AgentStoreUnavailable, conversation_rows_of, run_turn_atomic, turn_start
from memoryboard.llm.factory import get_chat_model
from memoryboard.ltm.store.erase_gate import erase_gate_pass
from memoryboard.models import ChatMessage

__all__ = ["CompletionResult", "chat_completion", "content_text", "new_messages"]

_STORED_ROLES = {"user": ChatMessage.Role.USER, "tool": ChatMessage.Role.TOOL}


@dataclass
class CompletionResult:
    conversation_id: str
    agent_id: str
    turn: TurnResult


def content_text(content: Any) -> str:
    """A message's content as text: a string as is, the text parts of a list joined, else empty."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text") or "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def new_messages(messages: list[dict]) -> int:
    """Where the new part of a request starts: just after its last assistant message."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            return index + 1
    return 0


def chat_completion(
    *,
    user,
    agent_id: str,
    conversation_id: str | None,
    messages: list[dict],
    tools: list[dict] | None = None,
    chat_model=None,
) -> CompletionResult:
    """Run the agent's turn on a client's Chat Completions messages, for the authenticated user.

    Args:
        user: the authenticated Django user; the namespace and user id come from it, never from the body.
        agent_id: the request's ``model``, an agent of agents.yaml.
        conversation_id: the conversation to store the turn in (another user's or agent's is refused);
            None starts a new one.
        messages: validated OpenAI messages, the last one a ``user`` or ``tool`` message; ``developer``
            messages already given the ``system`` role.
        tools: the client's own tools, offered to the model; their calls end the turn and go back to
            the client.
        chat_model: default ``factory.get_chat_model()``.

    Raises:
        AgentNotFound: unknown agent.
        ConversationNotYours: the conversation id belongs to another user or agent.
        AgentLLMUnavailable: the upstream model failed; the new messages stay stored.
        AgentStoreUnavailable: the database failed during the turn; the new messages stay stored.
    """
    agent, user_id, conversation_id, fresh = turn_start(agent_id=agent_id, user=user, conversation_id=conversation_id)
    start = new_messages(messages)
    history, turn_messages = messages[:start], messages[start:]
    query = next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    if chat_model is None:
        chat_model = get_chat_model()

    if not fresh:
        # Claimed (or found theirs) before the model is called; mostly a read. A fresh id is claimed with
        # the turn's writes: nobody else can know it.
        conversation_rows_of(conversation_id=conversation_id, user_id=user_id, agent_id=agent.agent_id)

    def store_new_messages(*, gate: bool = True) -> None:
        if gate:  # inside the turn's transaction the gate was just passed (``run_turn_atomic``)
            erase_gate_pass(user_ids=[user_id])
        if fresh:
            conversation_rows_of(conversation_id=conversation_id, user_id=user_id, agent_id=agent.agent_id, fresh=True)
        ChatMessage.objects.bulk_create([
            ChatMessage(
                conversation_id=conversation_id, agent_id=agent.agent_id, user_id=user_id,
                role=_STORED_ROLES[message["role"]], content=content_text(message.get("content")),
                metadata={"tool_call_id": message["tool_call_id"]} if message["role"] == "tool" else None,
            )
            for message in turn_messages
            if message["role"] in _STORED_ROLES
        ])

    # The model is called outside any transaction; then the claim, the client's new messages and the
    # turn's writes commit together (one fsync on MariaDB, see benchmarks/README.md § Proxy). When the
    # turn fails, the messages are stored on their own: never lost.
    try:
        turn = run_turn_atomic(
            agent=agent, user_id=user_id, conversation_id=conversation_id, history=history,
            user_message=query, turn_messages=turn_messages, client_tools=tools or None, chat_model=chat_model,
            savepoint=False, before_commit=partial(store_new_messages, gate=False),
        )
    except (AgentLLMUnavailable, AgentStoreUnavailable):
        with transaction.atomic():
            store_new_messages()
        raise
    return CompletionResult(conversation_id=conversation_id, agent_id=agent.agent_id, turn=turn)
