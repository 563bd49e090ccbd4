"""The context window viewer: the exact request an agent would send next for a stored conversation.

Built from the agent runtime's own pieces (system prompt, ``<long_term_memory>`` block, tools,
before-model chain), so what is shown is what :func:`memoryboard.agent.runtime.run_turn` would send.
The preview reads memories without touching their access statistics.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext, gettext_lazy as _

from memoryboard.agent.hooks import EMERGENCY_TOKEN_THRESHOLD, SummarizationHook
from memoryboard.agent.interceptors import ChainContext, ContextEditingInterceptor, run_before_model_chain
from memoryboard.agent.runtime import agent_namespace, build_system_prompt, history_with_positions
from memoryboard.llm.factory import get_chat_model
from memoryboard.ltm.search.receipts import receipt_build
from memoryboard.ltm.search.retrieval import memory_retrieve_ranking
from memoryboard.ltm.write.tools import MEMORY_TOOLS
from memoryboard.models import MemoryAccess
from memoryboard.models.labels import type_label
from memoryboard.strategies import CompositeConfig, SlidingWindowConfig, estimated_tokens, parse_params
from memoryboard.strategies.tokens import CHARS_PER_TOKEN

# The parts of a request, as Letta's context viewer splits it: the system prompt, the long-term memory block in
# it, the tool definitions, summaries (system messages after the first: a strategy's or a stored one) and
# the conversation's messages.
PARTS = ("system", "memory", "tools", "summary", "messages")

# The memory tools (``ltm.write.tools.MEMORY_TOOLS``) as support staff read them: what each does and what each
# parameter means, in the reader's language. The model reads the English definitions themselves.
TOOL_WORDS = {
    "memory_save": (_("Saves one lasting fact, preference, procedure or episode about the user in long-term "
                      "memory, as a short sentence."), {
        "content": _("the memory, one sentence"),
        "type": _("its type: a fact (stable), a preference (may change), a procedure (may expire) or an "
                  "episode (time-bound)"),
        "expires_at": _("when it stops being true or useful (a date or a time)"),
    }),
    "memory_search": (_("Looks in the user's long-term memory for items that match a query."), {
        "query": _("what to look for"),
        "k": _("how many items at most (5 if not given)"),
    }),
}
TYPE_WORDS = {"string": _("text"), "integer": _("whole number"), "number": _("number"), "boolean": _("yes or no"),
              "array": _("list"), "object": _("set of fields")}


@dataclass
class WindowSide:
    """One side (before or after the pipeline) of the request, with its tokens split by part."""

    messages: list[dict]
    tokens: dict[str, int]
    bars: list[dict] = field(default_factory=list)
    positions: list[int | None] = field(default_factory=list)  # input position of each message, None: produced

    @property
    def total(self) -> int:
        """The sum of the parts as shown: whole tokens (an estimate has no tenths), so the parts add up."""
        return sum(self.tokens.values())


@dataclass
class ContextWindow:
    agent_id: str
    before: WindowSide
    after: WindowSide
    tools: list[dict]
    memories: list[Any]
    budget: int | None
    emergency_threshold: int
    notes: list[str]
    scale_budget: float = 0.0  # x position (percent) of the budget line
    receipt: Any = None  # the retrieval receipt of the preview (unsaved ``RetrievalReceipt``)
    # (strategy, its side): the request after each strategy alone, as the runtime's interceptor applies it
    strategies: list[tuple[str, WindowSide]] = field(default_factory=list)


def _split_system(content: str) -> tuple[str, str]:
    start = content.find("<long_term_memory>")
    return (content, "") if start < 0 else (content[:start], content[start:])


def _param_type(spec: dict) -> str:
    words = str(TYPE_WORDS.get(spec.get("type"), spec.get("type") or "?"))
    if spec.get("enum"):
        words += " · " + gettext("one of %(values)s") % {"values": " / ".join(type_label(v) for v in spec["enum"])}
    if "minimum" in spec and "maximum" in spec:
        words += " · " + gettext("from %(min)s to %(max)s") % {"min": spec["minimum"], "max": spec["maximum"]}
    return words


def tools_in_words(tools: list[dict]) -> list[dict]:
    """The tools offered to the model as a list a person reads: each tool's name and what it does, each
    parameter's name, kind of value, whether it is required and what it means; no JSON."""
    out = []
    for tool in tools:
        function = tool.get("function") or {}
        name = str(function.get("name") or "?")
        description, meanings = TOOL_WORDS.get(name, (function.get("description") or "", {}))
        schema = function.get("parameters") or {}
        required = set(schema.get("required") or ())
        out.append({"name": name, "description": description, "params": [
            {"name": key, "type": _param_type(spec if isinstance(spec, dict) else {}), "required": key in required,
             "description": meanings.get(key, spec.get("description", "") if isinstance(spec, dict) else "")}
            for key, spec in (schema.get("properties") or {}).items()]})
    return out


def prompt_in_words(content: str, memories: list) -> str:
    """The system prompt with its ``<long_term_memory>`` block said in words: each memory's type by its
    name, its text and its relevance."""
    base, block = _split_system(content)
    if not block:
        return content
    lines = [gettext("Long-term memory given to the model:")]
    lines += [gettext("%(n)s. %(type)s: %(text)s (relevance %(score).2f)") % {
        "n": n, "type": type_label(item.memory.memory_type), "text": " ".join(item.memory.content.split()),
        "score": item.score} for n, item in enumerate(memories, start=1)]
    return base.rstrip() + "\n\n" + "\n".join(lines)


def _side(messages: list[dict], tools_tokens: float) -> WindowSide:
    tokens = dict.fromkeys(PARTS, 0.0)
    tokens["tools"] = tools_tokens
    for index, message in enumerate(messages):
        if index == 0 and message.get("role") == "system":  # later system messages are summaries
            base, block = _split_system(str(message.get("content") or ""))
            tokens["system"] += estimated_tokens(base)
            if block:
                tokens["memory"] += len(block) / CHARS_PER_TOKEN
        elif message.get("role") == "system":
            tokens["summary"] += estimated_tokens(str(message.get("content") or ""))
        else:
            tokens["messages"] += estimated_tokens(str(message.get("content") or ""))
    return WindowSide(messages=messages, tokens={k: round(v) for k, v in tokens.items()})


def context_budget(agent) -> int | None:
    """The token budget of the agent's context strategy (SLIDING_WINDOW, alone or in COMPOSITE)."""
    try:
        config = parse_params(agent.context_strategy or "COMPOSITE", agent.context_params or {})
    except Exception:  # a bad agents.yaml is reported by the system check, not here
        return None
    if isinstance(config, SlidingWindowConfig):
        return config.max_tokens
    if isinstance(config, CompositeConfig) and "SLIDING_WINDOW" in config.steps:
        return config.sliding_window.max_tokens
    return None


def _bars(side: WindowSide, scale: float) -> None:
    x = 0.0
    for part in PARTS:
        width = side.tokens[part] / scale * 100 if scale else 0
        side.bars.append({"part": part, "x": round(x, 3), "width": round(width, 3), "tokens": side.tokens[part]})
        x += width


def _positions(after: list[dict], before: list[dict], before_positions: list) -> list:
    """The input position of each message after the pipeline (``None`` for one it produced, a summary):
    the pipeline keeps order, so each is matched with the next equal message before it."""
    out, start = [], 0
    for message in after:
        key = (message.get("role"), message.get("content"))
        for j in range(start, len(before)):
            if (before[j].get("role"), before[j].get("content")) == key:
                out.append(before_positions[j])
                start = j + 1
                break
        else:
            out.append(None)
    return out


def context_window(*, agent, user_id: str, conversation_id: str, rows: list, chat_model=None,
                   strategies: list[tuple[str, dict]] | None = None) -> ContextWindow:
    """Build the next request of ``agent`` for a stored conversation, before and after the pipeline.

    Args:
        agent: The agent's :class:`~memoryboard.agents_config.AgentConfig`.
        user_id: The platform user id that owns the conversation (the namespace comes from it).
        conversation_id: The conversation.
        rows: Its stored rows, oldest first.
        chat_model: For the SummarizationHook (only called above its emergency threshold); default the
            configured model.
        strategies: ``(name, params)`` of context strategies: the request after each one alone, applied by
            the runtime's ``ContextEditingInterceptor``, is added (``ContextWindow.strategies``).

    Returns:
        Both sides of the request with their tokens by part, the tools and the budget lines.
    """
    if chat_model is None:
        chat_model = get_chat_model()
    ltm = agent.long_term_memory
    # The input position of each message (rows may be left out, e.g. a tool row whose call is not there).
    history, positions = history_with_positions(rows)
    query = next((m["content"] for m in reversed(history) if m["role"] == "user"), "")
    memories = []
    receipt = None
    if ltm.enabled and ltm.auto_load:
        found = memory_retrieve_ranking(
            namespace=agent_namespace(agent, user_id), query=query, k=ltm.load_max_items,
            agent_id=agent.agent_id, conversation_id=conversation_id, kind=MemoryAccess.Kind.INJECTION,
            log_access=False,
        )
        if found is not None:
            memories = found.results
            receipt = receipt_build(ranking=found, agent_id=agent.agent_id, user_id=user_id,
                                    conversation_id=conversation_id, kind=MemoryAccess.Kind.INJECTION)
    before_messages = [{"role": "system", "content": build_system_prompt(agent, memories)}, *history]
    context = ChainContext(agent=agent, conversation_id=conversation_id)
    after_messages = run_before_model_chain(
        [ContextEditingInterceptor(), SummarizationHook(chat_model)], before_messages, context
    )
    tools = MEMORY_TOOLS if (agent.memory_tools and ltm.enabled) else []
    tools_tokens = round(len(json.dumps(tools, ensure_ascii=False)) / CHARS_PER_TOKEN, 1) if tools else 0.0
    before, after = _side(before_messages, tools_tokens), _side(after_messages, tools_tokens)
    before.positions = [None, *positions]
    after.positions = _positions(after_messages, before_messages, before.positions)
    each = []
    for name, params in strategies or ():
        alone = run_before_model_chain([ContextEditingInterceptor(name, params)], before_messages,
                                       ChainContext(agent=agent, conversation_id=conversation_id))
        each.append((name, _side(alone, tools_tokens)))
    budget = context_budget(agent)
    scale = max(before.total, after.total, budget or 0, *(side.total for _name, side in each)) * 1.05 or 1.0
    for side in (before, after, *(side for _name, side in each)):
        _bars(side, scale)
    return ContextWindow(
        agent_id=agent.agent_id, before=before, after=after, tools=tools, memories=memories, budget=budget,
        emergency_threshold=EMERGENCY_TOKEN_THRESHOLD, notes=context.notes,
        scale_budget=round(budget / scale * 100, 3) if budget else 0.0, receipt=receipt, strategies=each,
    )
