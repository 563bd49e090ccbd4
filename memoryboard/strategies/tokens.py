"""The project's single token estimate (DESIGN 1.1): ``len(content) / 2.5 + 4`` per message."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .messages import Message

__all__ = ["CHARS_PER_TOKEN", "MESSAGE_OVERHEAD", "estimated_tokens", "total_tokens", "tokens_of_chars"]

CHARS_PER_TOKEN = 2.5
MESSAGE_OVERHEAD = 4


def estimated_tokens(message: Message | str) -> float:
    """Estimate the tokens of one message.

    Args:
        message: A :class:`Message` or its content as a string.

    Returns:
        ``len(content) / 2.5 + 4``.

    Example:
        >>> estimated_tokens("x" * 25)
        14.0
    """
    content = message if isinstance(message, str) else message.content
    return len(content) / CHARS_PER_TOKEN + MESSAGE_OVERHEAD


def tokens_of_chars(chars: int, count: int) -> float:
    """Tokens of ``count`` messages holding ``chars`` characters in total (exact, one division)."""
    return chars / CHARS_PER_TOKEN + MESSAGE_OVERHEAD * count


def total_tokens(messages: Iterable[Message | str]) -> float:
    """Estimate the tokens of a list of messages: the sum of :func:`estimated_tokens`.

    Args:
        messages: Messages or content strings.

    Returns:
        The total estimate (computed from the total length, so it does not accumulate float error).

    Example:
        >>> total_tokens(["x" * 5, "y" * 10])
        14.0
    """
    chars = 0
    count = 0
    for message in messages:
        chars += len(message if isinstance(message, str) else message.content)
        count += 1
    return tokens_of_chars(chars, count)
