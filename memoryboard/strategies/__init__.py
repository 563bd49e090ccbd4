"""Context and memory strategies of memoryboard: pure, framework-free (no Django import).

Context strategies (reversible, act on a copy): :func:`trim`, :func:`summarize`, :func:`sliding_window`,
:func:`clear_tool_results`, :func:`composite`, or :func:`apply_context` by name. Messages come in OpenAI or
Anthropic format (:mod:`.formats`, one reader and one writer each) and tool calls with their results are
kept or dropped as one unit (:mod:`.units`). Memory strategies (plans over stored rows):
:func:`plan_trim`, :func:`plan_summarize`, :func:`plan_delete`, :func:`plan_filter`, or :func:`plan_memory`.
"""

from __future__ import annotations

from .config import (
    CLEARED_PLACEHOLDER,
    ClearToolResultsConfig,
    CompositeConfig,
    DeleteConfig,
    FilterRules,
    SlidingWindowConfig,
    SummarizeConfig,
    TrimConfig,
    parse_params,
)
from .context import apply_context, clear_tool_results, composite, sliding_window, summarize, trim
from .errors import StrategyConfigError, StrategyError, StrategyInputError, SummarizerError
from .formats import Conversation, detect_format, read_conversation, to_message, to_messages, write_messages
from .memory import MEMORY_SUMMARY_PREFIX, plan_delete, plan_filter, plan_memory, plan_summarize, plan_trim
from .messages import Message, Role, ToolCall
from .registry import (
    CONTEXT_STRATEGIES,
    MEMORY_STRATEGIES,
    ParamSpec,
    StrategyInfo,
    context_param_spec,
    context_strategy_info,
    memory_param_spec,
    memory_strategy_info,
    normalize_name,
)
from .result import ContextResult, Fallback, MemoryPlan
from .summarizer import (
    CONTEXT_SUMMARY_INSTRUCTION,
    MAX_CONVERSATION_CHARS,
    MEMORY_SUMMARY_INSTRUCTION,
    OfflineSummarizer,
    Summarizer,
    conversation_text,
)
from .tokens import estimated_tokens, total_tokens

__all__ = [
    "CLEARED_PLACEHOLDER",
    "ClearToolResultsConfig",
    "Conversation",
    "ToolCall",
    "clear_tool_results",
    "detect_format",
    "read_conversation",
    "write_messages",
    "CONTEXT_STRATEGIES",
    "CONTEXT_SUMMARY_INSTRUCTION",
    "MAX_CONVERSATION_CHARS",
    "MEMORY_STRATEGIES",
    "MEMORY_SUMMARY_INSTRUCTION",
    "MEMORY_SUMMARY_PREFIX",
    "CompositeConfig",
    "ContextResult",
    "Fallback",
    "DeleteConfig",
    "FilterRules",
    "MemoryPlan",
    "Message",
    "OfflineSummarizer",
    "ParamSpec",
    "Role",
    "SlidingWindowConfig",
    "StrategyConfigError",
    "StrategyError",
    "StrategyInfo",
    "StrategyInputError",
    "SummarizeConfig",
    "Summarizer",
    "SummarizerError",
    "TrimConfig",
    "apply_context",
    "composite",
    "context_param_spec",
    "context_strategy_info",
    "conversation_text",
    "estimated_tokens",
    "memory_param_spec",
    "memory_strategy_info",
    "normalize_name",
    "parse_params",
    "plan_delete",
    "plan_filter",
    "plan_memory",
    "plan_summarize",
    "plan_trim",
    "sliding_window",
    "summarize",
    "to_message",
    "to_messages",
    "total_tokens",
    "trim",
]
