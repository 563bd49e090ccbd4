"""What a UI needs to list the strategies and build their parameter forms."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .config import (
    CLEARED_PLACEHOLDER,
    COMPOSITE_STEPS,
    TRIGGER_COMBINE,
    CONTEXT_STRATEGIES,
    MAX_INT_PARAM,
    MEMORY_STRATEGIES,
    normalize_name,
)

__all__ = [
    "CONTEXT_STRATEGIES",
    "MEMORY_STRATEGIES",
    "ParamSpec",
    "StrategyInfo",
    "context_param_spec",
    "memory_param_spec",
    "context_strategy_info",
    "memory_strategy_info",
    "normalize_name",
]


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a strategy, enough to render a form field.

    Attributes:
        name: The JSON key (dotted for COMPOSITE step parameters, e.g. ``"summarize.threshold"``).
        type: ``"int"``, ``"float"``, ``"bool"``, ``"text"``, ``"line"`` (one line of text), ``"choice"``
            (one of ``choices``), ``"roles"`` (a set of roles), ``"strings"`` or ``"steps"``.
        default: The design's default.
        min: Smallest allowed value for ``int``.
        max: Largest allowed value for ``int``.
        description: One-line help text.
        choices: Allowed items for ``choice``, ``roles`` and ``steps``.
    """

    name: str
    type: str
    default: Any
    description: str
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["choices"] = list(self.choices)
        if isinstance(self.default, tuple):
            data["default"] = list(self.default)
        return data


@dataclass(frozen=True)
class StrategyInfo:
    """A strategy's canonical name, a description and its parameters."""

    name: str
    description: str
    params: tuple[ParamSpec, ...]


def _int(name: str, default: int, description: str, minimum: int = 0) -> ParamSpec:
    return ParamSpec(name, "int", default, description, minimum, MAX_INT_PARAM)


_TRIM = (
    _int("keep_first", 2, "Messages kept from the start."),
    _int("keep_last", 10, "Messages kept from the end."),
)
_SUMMARIZE = (
    _int("threshold", 20, "Summarize above this many messages (LangChain SummarizationMiddleware: trigger messages)."),
    _int("keep_last", 6, "Newest messages kept verbatim after the summary (LangChain: keep messages)."),
    _int("trigger_tokens", 0, "Also summarize above this many estimated tokens; 0 = off (LangChain: trigger tokens)."),
    ParamSpec("trigger_fraction", "float", 0.0,
              "Also summarize above this share of the context window, 0 to 1; 0 = off (LangChain: trigger fraction).",
              0, 1),
    _int("window_tokens", 0, "The model's context window in tokens, for the share trigger."),
    ParamSpec("summary_prompt", "text", "",
              "The instruction given to the summarizer; empty = the default one (LangChain: summary_prompt)."),
    ParamSpec("trigger_combine", "choice", "any",
              "Summarize when any trigger that is set holds, or only when all of them do.", choices=TRIGGER_COMBINE),
)
_SLIDING = (_int("max_tokens", 4000, "Token budget, filled from the newest message backwards.", 1),)
_CLEAR = (
    _int("trigger_tokens", 4000, "Clear only when the estimated tokens exceed this (Anthropic clear_tool_uses: trigger)."),
    _int("keep", 3, "Newest tool results left untouched (Anthropic: keep)."),
    ParamSpec("exclude_tools", "strings", (), "Tools whose results are never cleared (Anthropic: exclude_tools)."),
    _int("clear_at_least", 0,
         "Clear only if that frees at least this many tokens, else nothing (Anthropic: clear_at_least)."),
    ParamSpec("clear_tool_inputs", "bool", False,
              "Also clear the arguments of the cleared calls (Anthropic: clear_tool_inputs)."),
    ParamSpec("placeholder", "line", CLEARED_PLACEHOLDER, "The text that replaces a cleared result."),
    _int("recent_turns", 0,
         "Results in the last N user turns are never cleared (OpenAI Agents SDK ToolOutputTrimmer: recent_turns)."),
    _int("max_output_chars", 0,
         "Clear only results longer than this many characters; 0 = any (ToolOutputTrimmer: max_output_chars)."),
    _int("preview_chars", 0,
         "A cleared result keeps its first N characters before the placeholder (ToolOutputTrimmer: preview_chars)."),
    ParamSpec("clear_thinking", "bool", False,
              "Also remove the thinking blocks of older assistant turns (Anthropic: clear_thinking)."),
    _int("keep_thinking_turns", 1, "Newest assistant turns whose thinking blocks stay (Anthropic: keep thinking_turns)."),
)


def _nested(prefix: str, specs: tuple[ParamSpec, ...]) -> tuple[ParamSpec, ...]:
    return tuple(
        ParamSpec(f"{prefix}.{s.name}", s.type, s.default, s.description, s.min, s.max, s.choices) for s in specs
    )


_CONTEXT: dict[str, StrategyInfo] = {
    "TRIM": StrategyInfo("TRIM", "Keep the first N and the last M messages, drop the middle.", _TRIM),
    "SUMMARIZE": StrategyInfo(
        "SUMMARIZE",
        "Above the threshold, replace all but the last messages by one LLM summary "
        "(degrades to the first 3 messages if the LLM fails).",
        _SUMMARIZE,
    ),
    "SLIDING_WINDOW": StrategyInfo(
        "SLIDING_WINDOW", "Keep the newest messages that fit in a token budget.", _SLIDING
    ),
    "CLEAR_TOOL_RESULTS": StrategyInfo(
        "CLEAR_TOOL_RESULTS",
        "Above the trigger, replace the content of the oldest tool results by a placeholder "
        "(calls, ids and order stay).",
        _CLEAR,
    ),
    "COMPOSITE": StrategyInfo(
        "COMPOSITE",
        "Run strategies in sequence, each on the previous output (default: summarize, then sliding window).",
        (
            ParamSpec("steps", "steps", ("SUMMARIZE", "SLIDING_WINDOW"), "Strategies to run, in order.",
                      choices=COMPOSITE_STEPS),
            *_nested("trim", _TRIM),
            *_nested("summarize", _SUMMARIZE),
            *_nested("sliding_window", _SLIDING),
            *_nested("clear_tool_results", _CLEAR),
        ),
    ),
}

_MEMORY: dict[str, StrategyInfo] = {
    "TRIM": StrategyInfo("TRIM", "Delete the stored rows between the first N and the last M.", _TRIM),
    "SUMMARIZE": StrategyInfo(
        "SUMMARIZE",
        "Replace all but the last rows by one stored summary of the user's preferences, habits and facts "
        "(nothing is deleted if the LLM fails).",
        _SUMMARIZE,
    ),
    "DELETE": StrategyInfo(
        "DELETE", "Keep only the newest N rows, delete the rest.",
        (_int("keep_latest", 50, "Newest rows kept."),),
    ),
    "FILTER": StrategyInfo(
        "FILTER",
        "Delete the rows that do not match the rules.",
        (
            ParamSpec("keep_roles", "roles", ("SYSTEM", "USER", "ASSISTANT"), "Roles whose messages are kept.",
                      choices=("SYSTEM", "USER", "ASSISTANT", "TOOL")),
            ParamSpec("assistant_keywords", "strings", (), "An assistant message containing one of these is kept."),
            ParamSpec("keep_tool", "bool", False, "Keep tool messages."),
            _int("min_length", 0, "Messages shorter than this (stripped) are deleted."),
        ),
    ),
}


def context_strategy_info(name: str) -> StrategyInfo:
    """Description and parameters of a context strategy (name in any case)."""
    return _CONTEXT[normalize_name(name, "context")]


def memory_strategy_info(name: str) -> StrategyInfo:
    """Description and parameters of a memory strategy (name in any case)."""
    return _MEMORY[normalize_name(name, "memory")]


def context_param_spec(name: str) -> list[ParamSpec]:
    """Parameter schema of a context strategy, for building a form.

    Args:
        name: Strategy name in any case.

    Returns:
        One :class:`ParamSpec` per parameter.

    Raises:
        StrategyConfigError: Unknown strategy (``field="name"``).

    Example:
        >>> [p.name for p in context_param_spec("trim")]
        ['keep_first', 'keep_last']
    """
    return list(context_strategy_info(name).params)


def memory_param_spec(name: str) -> list[ParamSpec]:
    """Parameter schema of a memory strategy, for building a form (see :func:`context_param_spec`)."""
    return list(memory_strategy_info(name).params)
