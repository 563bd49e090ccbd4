"""Hooks of the agent runtime. SummarizationHook: the emergency brake before an LLM call (DESIGN 1.4)."""

from __future__ import annotations

import logging

from django.utils.translation import gettext as _

from memoryboard.agent.interceptors import BEFORE_LLM_CALL, ChainContext
from memoryboard.llm.errors import LLMError
from memoryboard.strategies import CONTEXT_SUMMARY_INSTRUCTION, MAX_CONVERSATION_CHARS, read_conversation, total_tokens
from memoryboard.strategies.summarizer import transcript_line
from memoryboard.strategies.tokens import CHARS_PER_TOKEN, MESSAGE_OVERHEAD
from memoryboard.strategies.units import Units

logger = logging.getLogger(__name__)

EMERGENCY_TOKEN_THRESHOLD = 80_000
FALLBACK_EDGE_CHARS = 1_000
SUMMARY_PREFIX = "[紧急压缩摘要 Emergency summary] "


def omission_marker(omitted: int) -> str:
    return f"\n…[{omitted} characters omitted / 省略 {omitted} 个字符]…\n"


def head_and_tail(text: str, edge: int = FALLBACK_EDGE_CHARS) -> str:
    """The first and last ``edge`` characters with an omission marker between (the text if short enough)."""
    if len(text) <= 2 * edge:
        return text
    return text[:edge] + omission_marker(len(text) - 2 * edge) + text[-edge:]


def _tokens(messages: list[dict]) -> float:
    """The one token estimate, tool calls and non-text parts included."""
    return total_tokens(read_conversation(messages, format="openai").messages)


def _transcript(messages: list[dict]) -> str:
    return "\n".join(transcript_line(m) for m in read_conversation(messages, format="openai").messages)


class SummarizationHook:
    """Order 50, phase BEFORE_LLM_CALL: compress when the estimate exceeds ``threshold`` tokens.

    Leading system messages and the newest unit (the newest message, or a tool call with its results)
    are kept; everything between is replaced by one system message:

    - with a chat model: its summary of the middle (the transcript cut to the first
      ``MAX_CONVERSATION_CHARS`` characters);
    - without one (``None``): a hard cut, keeping the newest messages that fit the budget;
    - if the call fails, or the summary is longer than its input: the middle's first and last
      1,000 characters with an omission marker.

    Args:
        chat_model: a :class:`~memoryboard.llm.chat.ChatModel`, or None for the hard cut.
        threshold: the token estimate that triggers the hook (default 80,000).
    """

    order = 50
    phase = BEFORE_LLM_CALL

    def __init__(self, chat_model=None, *, threshold: int = EMERGENCY_TOKEN_THRESHOLD) -> None:
        self.chat_model = chat_model
        self.threshold = threshold
        self.last_action: str | None = None  # in English, for logs and tests
        self._action_words = ""  # the same in the reader's language, for the note

    def intercept(self, messages: list[dict], context: ChainContext) -> list[dict]:
        self._did(None, "")
        before = _tokens(messages)
        if before <= self.threshold:
            return messages
        msgs = read_conversation(messages, format="openai").messages
        units = Units(msgs)
        last = units.start_of(len(msgs) - 1)
        head = 0
        while head < last and msgs[head].role.value == "SYSTEM":
            head += 1
        system, middle, newest = messages[:head], messages[head:last], messages[last:]
        self._units = [(a - head, b - head) for a, b in units.spans() if head <= a and b <= last]
        if self.chat_model is None:
            out = self._hard_cut(system, middle, newest)
        else:
            out = system + [self._summary_message(middle)] + newest if middle else messages
        context.notes.append(_("emergency compression (%(action)s): %(before)s -> %(after)s tokens") % {
            "action": self._action_words, "before": f"{before:.0f}", "after": f"{_tokens(out):.0f}"})
        return out

    def _did(self, action: str | None, words: str) -> None:
        """Record what the hook did: ``action`` in English, ``words`` in the reader's language."""
        self.last_action, self._action_words = action, words

    def _summary_message(self, middle: list[dict]) -> dict:
        text = _transcript(middle)
        try:
            reply = self.chat_model.complete(
                [
                    {"role": "system", "content": CONTEXT_SUMMARY_INSTRUCTION},
                    {"role": "user", "content": text[:MAX_CONVERSATION_CHARS]},
                ]
            )
            summary = (reply.content or "").strip()
            if not summary:
                raise LLMError("empty response")
        except LLMError as exc:
            logger.warning("emergency summary failed: %s", exc.reason)
            self._did(f"fallback: {exc.reason}",
                      _("the summary failed (%(reason)s): its start and end kept") % {"reason": exc.reason})
            return {"role": "system", "content": head_and_tail(text)}
        if len(summary) >= len(text):
            self._did("fallback: summary longer than its input",
                      _("the summary was longer than its input: its start and end kept"))
            return {"role": "system", "content": head_and_tail(text)}
        self._did("llm summary", _("an LLM summary"))
        return {"role": "system", "content": SUMMARY_PREFIX + summary}

    def _hard_cut(self, system: list[dict], middle: list[dict], newest: list[dict]) -> list[dict]:
        self._did("hard cut", _("the oldest messages cut"))
        budget = self.threshold - _tokens(system) - _tokens(newest)
        start = len(middle)
        for a, b in reversed(self._units):
            cost = _tokens(middle[a:b])
            if cost > budget:
                break
            budget -= cost
            start = a
        kept = middle[start:]
        if len(newest) > 1:
            return system + kept + newest  # a tool unit is sent whole, even over the budget
        last = dict(newest[0])
        room = int((self.threshold - _tokens(system) - MESSAGE_OVERHEAD) * CHARS_PER_TOKEN)
        content = str(last.get("content") or "")
        if len(content) > room:
            # The newest message alone is over the budget: keep its end, where the question usually is.
            last["content"] = content[-max(room, 0):] if room > 0 else ""
            kept = []
        return system + kept + [last]
