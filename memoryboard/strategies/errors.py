"""Errors raised by the strategy package.

All of them derive from :class:`StrategyError`, so callers (API views, the playground, commands) can catch
one type and turn ``field`` and ``message`` into a JSON error that names the field at fault.
"""

from __future__ import annotations

__all__ = ["StrategyError", "StrategyConfigError", "StrategyInputError", "SummarizerError"]


class StrategyError(Exception):
    """Base class of every error raised by :mod:`memoryboard.strategies`."""


class _FieldError(StrategyError):
    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class StrategyConfigError(_FieldError):
    """Invalid strategy parameters: bad value, unknown key, unknown strategy or step.

    Attributes:
        field: The parameter at fault, e.g. ``"keep_last"`` or ``"sliding_window.max_tokens"``.
        message: A human-readable reason, without the field name.
    """


class StrategyInputError(_FieldError):
    """Invalid input messages, e.g. a missing content or an unknown role.

    Attributes:
        field: The input field at fault, e.g. ``"messages[3].role"``.
        message: A human-readable reason, without the field name.
    """


class SummarizerError(StrategyError):
    """A summarizer could not produce a summary (timeout, HTTP error, malformed answer, ...)."""
