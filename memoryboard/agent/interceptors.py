"""The before-model chain of the agent runtime (DESIGN 1.4).

Each step has an ``order`` and a ``phase`` and turns the message list (OpenAI dicts) into the one the
model will see. Steps run in ascending ``order``: ContextEditingInterceptor (30), then
SummarizationHook (50, see hooks.py). The stored conversation is never touched: steps return copies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

BEFORE_LLM_CALL = "BEFORE_LLM_CALL"


@dataclass
class ChainContext:
    """What a step may read, and where it reports what it did.

    Attributes:
        agent: the agent's :class:`~memoryboard.ltm.config.AgentConfig`.
        notes: one line per step that changed something, e.g. ``"context: COMPOSITE 12 -> 5 messages"``.
    """

    agent: Any
    notes: list[str] = field(default_factory=list)


@runtime_checkable
class BeforeModelStep(Protocol):
    order: int
    phase: str

    def intercept(self, messages: list[dict], context: ChainContext) -> list[dict]:
        """Return the messages to send on (a new list; the input is not modified)."""
        ...


def run_before_model_chain(
    steps: Iterable[BeforeModelStep], messages: list[dict], context: ChainContext, *, phase: str = BEFORE_LLM_CALL
) -> list[dict]:
    """Run the steps of ``phase`` in ascending ``order`` (stable for equal orders)."""
    for step in sorted((s for s in steps if s.phase == phase), key=lambda s: s.order):
        messages = step.intercept(list(messages), context)
    return messages


def to_openai_message(message: Any) -> dict:
    """A strategy :class:`Message` (or dict) as a plain OpenAI chat message: role and content only."""
    if isinstance(message, dict):
        return {"role": str(message.get("role", "user")).lower(), "content": str(message.get("content") or "")}
    return {"role": message.role.value.lower(), "content": message.content}


class ContextEditingInterceptor:
    """Order 30: apply the agent's context strategy (default COMPOSITE) to a copy of the messages.

    Leading system messages (the system prompt with the long-term memory block) are kept as they
    are; the strategy acts on the conversation after them.
    """

    order = 30
    phase = BEFORE_LLM_CALL

    def __init__(self, strategy: str | None = None, params: dict | None = None) -> None:
        self.strategy = strategy
        self.params = params

    def intercept(self, messages: list[dict], context: ChainContext) -> list[dict]:
        from memoryboard.conversations import context_apply

        agent = context.agent
        strategy = self.strategy or getattr(agent, "context_strategy", None) or "COMPOSITE"
        params = self.params if self.params is not None else dict(getattr(agent, "context_params", {}) or {})
        head = 0
        while head < len(messages) and str(messages[head].get("role", "")).lower() == "system":
            head += 1
        body = messages[head:]
        if not body:
            return messages
        result = context_apply(strategy, [to_openai_message(m) for m in body], params)
        if result.fallback:
            context.notes.append(f"context: {result.strategy} fallback ({result.fallback})")
        if len(result.messages) != len(body) or result.summarized:
            context.notes.append(f"context: {result.strategy} {len(body)} -> {len(result.messages)} messages")
        out = [to_openai_message(m) for m in result.messages]
        if not result.sources or result.sources[-1] != len(body) - 1:
            # The model must always see the message it answers, even if it alone exceeds a budget.
            out.append(to_openai_message(body[-1]))
            context.notes.append("context: newest message kept over the strategy's budget")
        return messages[:head] + out
