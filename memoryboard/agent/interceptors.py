"""The before-model chain of the agent runtime (DESIGN 1.4).

Each step has an ``order`` and a ``phase`` and turns the message list (OpenAI dicts) into the one the
model will see. Steps run in ascending ``order``: ContextEditingInterceptor (30), then
SummarizationHook (50, see hooks.py). The stored conversation is never touched: steps return copies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from django.utils.translation import gettext as _, ngettext

from memoryboard.conversations import context_apply
from memoryboard.strategies import read_conversation
from memoryboard.strategies.units import Units
from memoryboard.strategy_texts import fallback_text

BEFORE_LLM_CALL = "BEFORE_LLM_CALL"


@dataclass
class ChainContext:
    """What a step may read, and where it reports what it did.

    Attributes:
        agent: the agent's :class:`~memoryboard.agents_config.AgentConfig`.
        conversation_id: the stored conversation, whose cached summaries SUMMARIZE reuses (None: no cache).
        notes: one line per step that changed something, e.g. ``"context: COMPOSITE 12 -> 5 messages"``.
    """

    agent: Any
    notes: list[str] = field(default_factory=list)
    conversation_id: str | None = None


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


class ContextEditingInterceptor:
    """Order 30: apply the agent's context strategy (default COMPOSITE) to a copy of the messages.

    The messages are OpenAI Chat Completions messages as agents send them (``content`` null or parts,
    ``tool_calls``, ``tool``results, any other field); kept messages are passed on as the very dicts that
    came in, and a tool call and its results are kept or dropped together. Leading system messages (the
    system prompt with the long-term memory block) are kept as they are; the strategy acts on the
    conversation after them (``keep_system``, the playground's default too). The newest unit (the user's
    message, or the tool results the model must read) is always sent, even over the strategy's budget.
    """

    order = 30
    phase = BEFORE_LLM_CALL

    def __init__(self, strategy: str | None = None, params: dict | None = None) -> None:
        self.strategy = strategy
        self.params = params

    def intercept(self, messages: list[dict], context: ChainContext) -> list[dict]:
        agent = context.agent
        strategy = self.strategy or getattr(agent, "context_strategy", None) or "COMPOSITE"
        params = self.params if self.params is not None else dict(getattr(agent, "context_params", {}) or {})
        if not messages:
            return messages
        result = context_apply(strategy, messages, params, format="openai", keep_system=True,
                               cache_conversation=context.conversation_id)
        # The notes are read by people (the playground's context window, the API's ``notes``): in the
        # request's language.
        if result.summary_cache == "reused":
            context.notes.append(_("context: cached summary reused"))
        elif result.summary_cache == "extended":
            context.notes.append(_("context: cached summary extended"))
        if result.fallback_reason:
            context.notes.append(_("context: %(strategy)s fell back: %(reason)s")
                                 % {"strategy": result.strategy, "reason": fallback_text(result.fallback_reason)})
        # Counted as the pages count a conversation: the messages after the system prompt (the agent's own,
        # first), a stored system row among them.
        head = 1 if str(messages[0].get("role", "")).lower() == "system" else 0
        if len(result.messages) != len(messages) or result.summarized or result.cleared:
            note = _("context: %(strategy)s %(before)s -> %(after)s messages") % {
                "strategy": result.strategy, "before": len(messages) - head, "after": len(result.messages) - head}
            if result.cleared:
                note += ngettext(", %(n)s tool result cleared", ", %(n)s tool results cleared",
                                 len(result.cleared)) % {"n": len(result.cleared)}
            context.notes.append(note)
        out = result.output()
        if not result.sources or result.sources[-1] != len(messages) - 1:
            # The model must always see what it answers, even if that alone exceeds a budget.
            start = Units(read_conversation(messages, format="openai").messages).start_of(len(messages) - 1)
            out.extend(messages[start:])
            context.notes.append(_("context: newest message kept over the strategy's budget"))
        return out
