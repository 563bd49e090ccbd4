"""Frozen, validated parameter sets of the strategies, and their parsing from JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import StrategyConfigError, StrategyInputError
from .messages import Message, Role

__all__ = [
    "MAX_INT_PARAM",
    "TrimConfig",
    "SummarizeConfig",
    "SlidingWindowConfig",
    "CompositeConfig",
    "ClearToolResultsConfig",
    "CLEARED_PLACEHOLDER",
    "DeleteConfig",
    "FilterRules",
    "parse_params",
    "normalize_name",
    "CONTEXT_STRATEGIES",
    "MEMORY_STRATEGIES",
    "COMPOSITE_STEPS",
]

MAX_INT_PARAM = 10_000_000

CONTEXT_STRATEGIES = ("TRIM", "SUMMARIZE", "SLIDING_WINDOW", "CLEAR_TOOL_RESULTS", "COMPOSITE")
MEMORY_STRATEGIES = ("TRIM", "SUMMARIZE", "DELETE", "FILTER")
COMPOSITE_STEPS = ("TRIM", "SUMMARIZE", "SLIDING_WINDOW", "CLEAR_TOOL_RESULTS")
CLEARED_PLACEHOLDER = "[tool result cleared]"
TRIGGER_COMBINE = ("any", "all")
MAX_PLACEHOLDER_CHARS = 500


def normalize_name(name: object, kind: str = "context", *, field: str = "name") -> str:
    """Normalize a strategy name given in any case, with ``-`` or ``_`` (``"sliding-window"``).

    Args:
        name: The name to normalize.
        kind: ``"context"``, ``"memory"``, ``"step"`` (a COMPOSITE step) or ``"any"``.
        field: Field name reported in the error.

    Returns:
        The canonical upper-case name, e.g. ``"SLIDING_WINDOW"``.

    Raises:
        StrategyConfigError: If the name is not a known strategy of that kind.

    Example:
        >>> normalize_name("sliding-window")
        'SLIDING_WINDOW'
    """
    known = {
        "context": CONTEXT_STRATEGIES,
        "memory": MEMORY_STRATEGIES,
        "step": COMPOSITE_STEPS,
        "any": tuple(dict.fromkeys(CONTEXT_STRATEGIES + MEMORY_STRATEGIES)),
    }[kind]
    if isinstance(name, str):
        canonical = name.strip().upper().replace("-", "_").replace(" ", "_")
        if canonical in known:
            return canonical
    label = "composite step" if kind == "step" else f"{kind} strategy" if kind != "any" else "strategy"
    raise StrategyConfigError(field, f"unknown {label} {name!r} (expected one of {', '.join(known)})")


def check_int(name: str, value: object, minimum: int = 0, maximum: int = MAX_INT_PARAM) -> int:
    """Validate an integer parameter (bool and float are rejected), naming the field on error."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise StrategyConfigError(name, f"must be an integer, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise StrategyConfigError(name, f"must be >= {minimum}, got {value}")
    if value > maximum:
        raise StrategyConfigError(name, f"must be <= {maximum}, got {value}")
    return value


def _check_ints(obj: object, minimums: Mapping[str, int] | None = None) -> None:
    for f in fields(obj):  # type: ignore[arg-type]
        if f.type in ("int", int):
            check_int(f.name, getattr(obj, f.name), (minimums or {}).get(f.name, 0))


@dataclass(frozen=True)
class TrimConfig:
    """TRIM: keep the first ``keep_first`` and the last ``keep_last`` messages."""

    keep_first: int = 2
    keep_last: int = 10

    def __post_init__(self) -> None:
        _check_ints(self)


MAX_PROMPT_CHARS = 4000


@dataclass(frozen=True)
class SummarizeConfig:
    """SUMMARIZE: when triggered, replace all but the last ``keep_last`` messages by a summary.

    It triggers above ``threshold`` messages, or (when set) above ``trigger_tokens`` estimated tokens, or
    above ``trigger_fraction`` of a ``window_tokens`` context window: any of them, as LangChain's
    ``SummarizationMiddleware(trigger=[("messages", N), ("tokens", T), ("fraction", f)])``, or with
    ``trigger_combine="all"`` only when every trigger that is set holds.
    ``summary_prompt`` replaces the design's instruction when not empty.
    """

    threshold: int = 20
    keep_last: int = 6
    trigger_tokens: int = 0
    trigger_fraction: float = 0.0
    window_tokens: int = 0
    summary_prompt: str = ""
    trigger_combine: str = "any"

    def __post_init__(self) -> None:
        _check_ints(self)
        if self.trigger_combine not in TRIGGER_COMBINE:
            raise StrategyConfigError("trigger_combine", f"must be one of {', '.join(TRIGGER_COMBINE)}, "
                                      f"got {self.trigger_combine!r}")
        fraction = self.trigger_fraction
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 <= fraction <= 1:
            raise StrategyConfigError("trigger_fraction", f"must be a number from 0 to 1, got {fraction!r}")
        object.__setattr__(self, "trigger_fraction", float(fraction))
        if fraction and not self.window_tokens:
            raise StrategyConfigError("window_tokens", "give the model's context window for trigger_fraction")
        if not isinstance(self.summary_prompt, str) or len(self.summary_prompt) > MAX_PROMPT_CHARS:
            raise StrategyConfigError("summary_prompt", f"must be text of at most {MAX_PROMPT_CHARS} characters")

    def triggered(self, count: int, tokens: float) -> bool:
        """Whether ``count`` messages of ``tokens`` estimated tokens are to be summarized."""
        checks = [count > self.threshold]
        if self.trigger_tokens:
            checks.append(tokens > self.trigger_tokens)
        if self.trigger_fraction:
            checks.append(tokens > self.trigger_fraction * self.window_tokens)
        return all(checks) if self.trigger_combine == "all" else any(checks)


@dataclass(frozen=True)
class SlidingWindowConfig:
    """SLIDING_WINDOW: the newest messages that fit in ``max_tokens``."""

    max_tokens: int = 4000

    def __post_init__(self) -> None:
        _check_ints(self, {"max_tokens": 1})


@dataclass(frozen=True)
class ClearToolResultsConfig:
    """CLEAR_TOOL_RESULTS: above ``trigger_tokens``, clear the content of all but the newest ``keep`` tool
    results, never those of the tools named in ``exclude_tools``; only if that frees at least
    ``clear_at_least`` tokens; with ``clear_tool_inputs`` the cleared calls' arguments too; a cleared result
    reads ``placeholder`` (Anthropic's ``clear_tool_uses`` edit and LangChain's ``ClearToolUsesEdit`` have
    the same knobs).

    The OpenAI Agents SDK's ``ToolOutputTrimmer`` knobs: results in the last ``recent_turns`` user turns
    are never touched, only results longer than ``max_output_chars`` are cleared (0: any), and a cleared
    result keeps its first ``preview_chars`` characters before the placeholder. Anthropic's
    ``clear_thinking`` edit: with ``clear_thinking``, the thinking blocks of all but the last
    ``keep_thinking_turns`` assistant turns that have some are removed."""

    trigger_tokens: int = 4000
    keep: int = 3
    exclude_tools: tuple[str, ...] = ()
    clear_at_least: int = 0
    clear_tool_inputs: bool = False
    placeholder: str = CLEARED_PLACEHOLDER
    recent_turns: int = 0
    max_output_chars: int = 0
    preview_chars: int = 0
    clear_thinking: bool = False
    keep_thinking_turns: int = 1

    def __post_init__(self) -> None:
        _check_ints(self)
        for name in ("clear_tool_inputs", "clear_thinking"):
            if not isinstance(getattr(self, name), bool):
                raise StrategyConfigError(name, f"must be a boolean, got {type(getattr(self, name)).__name__}")
        text = self.placeholder
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_PLACEHOLDER_CHARS:
            raise StrategyConfigError("placeholder", f"must be text of 1 to {MAX_PLACEHOLDER_CHARS} characters")
        tools = self.exclude_tools
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise StrategyConfigError("exclude_tools", "must be a list of tool names")
        tools = tuple(tools)
        for i, name in enumerate(tools):
            if not isinstance(name, str) or not name:
                raise StrategyConfigError(f"exclude_tools[{i}]", "must be a non-empty string")
        object.__setattr__(self, "exclude_tools", tools)


@dataclass(frozen=True)
class CompositeConfig:
    """COMPOSITE: run ``steps`` in order, each step with its own config."""

    steps: tuple[str, ...] = ("SUMMARIZE", "SLIDING_WINDOW")
    trim: TrimConfig = field(default_factory=TrimConfig)
    summarize: SummarizeConfig = field(default_factory=SummarizeConfig)
    sliding_window: SlidingWindowConfig = field(default_factory=SlidingWindowConfig)
    clear_tool_results: ClearToolResultsConfig = field(default_factory=ClearToolResultsConfig)

    def __post_init__(self) -> None:
        if isinstance(self.steps, (str, bytes)) or not isinstance(self.steps, Iterable):
            raise StrategyConfigError("steps", "must be a list of strategy names")
        steps = tuple(normalize_name(s, "step", field=f"steps[{i}]") for i, s in enumerate(self.steps))
        if not steps:
            raise StrategyConfigError("steps", "must name at least one strategy")
        object.__setattr__(self, "steps", steps)
        for name, cls in _STEP_CONFIGS:
            if not isinstance(getattr(self, name), cls):
                raise StrategyConfigError(name, f"must be a {cls.__name__}")


@dataclass(frozen=True)
class DeleteConfig:
    """Memory DELETE: keep only the newest ``keep_latest`` rows."""

    keep_latest: int = 50

    def __post_init__(self) -> None:
        _check_ints(self)


@dataclass(frozen=True)
class FilterRules:
    """Declarative rules of the memory FILTER strategy (built from JSON, never ``eval``).

    A message is kept when its role is in ``keep_roles``, or it is an ASSISTANT message containing one
    of ``assistant_keywords`` (case-insensitive), or it is a TOOL message and ``keep_tool`` is set; and in
    every case its stripped content is at least ``min_length`` characters long.
    """

    # Safe default (issue 15): assistant replies are kept; a rule set deletes only what it is told to.
    keep_roles: frozenset[Role] = frozenset({Role.SYSTEM, Role.USER, Role.ASSISTANT})
    assistant_keywords: tuple[str, ...] = ()
    keep_tool: bool = False
    min_length: int = 0

    def __post_init__(self) -> None:
        roles = self.keep_roles
        if isinstance(roles, (str, bytes)) or not isinstance(roles, Iterable):
            raise StrategyConfigError("keep_roles", "must be a list of roles")
        parsed = set()
        for i, role in enumerate(roles):
            try:
                parsed.add(Role.parse(role))
            except StrategyInputError as exc:
                raise StrategyConfigError(f"keep_roles[{i}]", exc.message) from None
        object.__setattr__(self, "keep_roles", frozenset(parsed))
        keywords = self.assistant_keywords
        if isinstance(keywords, (str, bytes)) or not isinstance(keywords, Iterable):
            raise StrategyConfigError("assistant_keywords", "must be a list of strings")
        keywords = tuple(keywords)
        for i, keyword in enumerate(keywords):
            if not isinstance(keyword, str) or not keyword.strip():
                raise StrategyConfigError(f"assistant_keywords[{i}]", "must be a non-empty string")
        object.__setattr__(self, "assistant_keywords", keywords)
        if not isinstance(self.keep_tool, bool):
            raise StrategyConfigError("keep_tool", f"must be a boolean, got {type(self.keep_tool).__name__}")
        check_int("min_length", self.min_length)

    def predicate(self) -> Callable[[Message], bool]:
        """Return the rules as a predicate: ``True`` keeps the message."""
        roles = self.keep_roles
        keywords = tuple(k.lower() for k in self.assistant_keywords)
        keep_tool = self.keep_tool
        min_length = self.min_length

        def keep(message: Message) -> bool:
            if min_length and len(message.content.strip()) < min_length:
                return False
            role = message.role
            if role in roles:
                return True
            if role is Role.ASSISTANT and keywords:
                text = message.content.lower()
                return any(k in text for k in keywords)
            return role is Role.TOOL and keep_tool

        return keep

    def to_dict(self) -> dict[str, Any]:
        return {
            "keep_roles": sorted(r.value for r in self.keep_roles),
            "assistant_keywords": list(self.assistant_keywords),
            "keep_tool": self.keep_tool,
            "min_length": self.min_length,
        }


_STEP_CONFIGS = (
    ("trim", TrimConfig),
    ("summarize", SummarizeConfig),
    ("sliding_window", SlidingWindowConfig),
    ("clear_tool_results", ClearToolResultsConfig),
)

_SIMPLE_CONFIGS: dict[str, type] = {
    "TRIM": TrimConfig,
    "SUMMARIZE": SummarizeConfig,
    "SLIDING_WINDOW": SlidingWindowConfig,
    "CLEAR_TOOL_RESULTS": ClearToolResultsConfig,
    "DELETE": DeleteConfig,
    "FILTER": FilterRules,
}


def _build(cls: type, params: Mapping[str, Any], prefix: str = "") -> Any:
    if not isinstance(params, Mapping):
        raise StrategyConfigError(prefix.rstrip(".") or "params", "must be an object")
    allowed = {f.name for f in fields(cls)}
    for key in params:
        if key not in allowed:
            raise StrategyConfigError(
                f"{prefix}{key}", f"unknown parameter (expected one of {', '.join(sorted(allowed))})"
            )
    try:
        return cls(**params)
    except StrategyConfigError as exc:
        if prefix:
            raise StrategyConfigError(prefix + exc.field, exc.message) from None
        raise


def parse_params(strategy_name: str, params: Mapping[str, Any] | None) -> Any:
    """Build the config of a strategy from a JSON object, rejecting unknown keys.

    TRIM and SUMMARIZE take the same parameters as context and as memory strategies.

    COMPOSITE takes one nested object per step, so that steps sharing a parameter name (``keep_last`` of
    TRIM and of SUMMARIZE) never clash::

        {"steps": ["summarize", "sliding_window"],
         "summarize": {"threshold": 20, "keep_last": 6},
         "sliding_window": {"max_tokens": 4000}}

    Every key is optional (defaults of the design); ``steps`` names run in order and must not be empty;
    a nested object for a step that is not in ``steps`` is accepted and ignored.

    Args:
        strategy_name: Any case, ``-`` or ``_`` (``"sliding-window"``).
        params: The JSON parameters, or ``None`` for the defaults.

    Returns:
        A :class:`TrimConfig`, :class:`SummarizeConfig`, :class:`SlidingWindowConfig`,
        :class:`CompositeConfig`, :class:`DeleteConfig` or :class:`FilterRules`.

    Raises:
        StrategyConfigError: Unknown strategy (field ``name``), unknown key or bad value (the field,
            dotted for COMPOSITE, e.g. ``sliding_window.max_tokens``).

    Example:
        >>> parse_params("trim", {"keep_first": 2, "keep_last": 3})
        TrimConfig(keep_first=2, keep_last=3)
    """
    name = normalize_name(strategy_name, "any")
    params = {} if params is None else params
    if name != "COMPOSITE":
        return _build(_SIMPLE_CONFIGS[name], params)
    if not isinstance(params, Mapping):
        raise StrategyConfigError("params", "must be an object")
    allowed = {"steps", *(key for key, _cls in _STEP_CONFIGS)}
    for key in params:
        if key not in allowed:
            raise StrategyConfigError(key, f"unknown parameter (expected one of {', '.join(sorted(allowed))})")
    kwargs: dict[str, Any] = {}
    if "steps" in params:
        kwargs["steps"] = params["steps"]
    for key, cls in _STEP_CONFIGS:
        if key in params:
            kwargs[key] = _build(cls, params[key], prefix=f"{key}.")
    return CompositeConfig(**kwargs)
