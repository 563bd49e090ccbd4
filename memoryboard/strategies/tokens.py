"""The project's single token estimate (DESIGN 1.1): ``len(content) / 2.5 + 4`` per message.

Non-text content counts in the same function, as characters added to the text (``Message.extra``):

- a tool call: the length of its name plus the length of its arguments (JSON text);
- an image (OpenAI ``image_url`` part, Anthropic ``image`` block): a fixed :data:`IMAGE_TOKENS`;
- any other non-text part or block (audio, file, document, redacted thinking, server tool blocks, ...):
  a fixed :data:`BLOCK_TOKENS`; an Anthropic ``thinking`` block counts by its text.

The fixed costs are deliberately round: OpenAI bills a low-detail image 85 tokens and a 1024x1024
high-detail one 765; Anthropic ~1,600 for a 1092x1092 image. 512 sits between and errs towards keeping
room; a budget that must be exact needs the provider's own tokenizer anyway.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .messages import Message

__all__ = [
    "BLOCK_CHARS", "BLOCK_TOKENS", "CHARS_PER_TOKEN", "IMAGE_CHARS", "IMAGE_TOKENS", "MESSAGE_OVERHEAD",
    "estimated_tokens", "total_tokens", "tokens_of_chars",
]

CHARS_PER_TOKEN = 2.5
MESSAGE_OVERHEAD = 4
IMAGE_TOKENS = 512
BLOCK_TOKENS = 128
IMAGE_CHARS = int(IMAGE_TOKENS * CHARS_PER_TOKEN)
BLOCK_CHARS = int(BLOCK_TOKENS * CHARS_PER_TOKEN)


def estimated_tokens(message: Message | str) -> float:
    """Estimate the tokens of one message.

    Args:
        message: A :class:`Message` or its content as a string.

    Returns:
        ``(len(content) + extra) / 2.5 + 4``, ``extra`` being the non-text content (tool calls, images).

    Example:
        >>> estimated_tokens("x" * 25)
        14.0
    """
    size = len(message) if isinstance(message, str) else message.size
    return size / CHARS_PER_TOKEN + MESSAGE_OVERHEAD


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
        chars += len(message) if isinstance(message, str) else message.size
        count += 1
    return tokens_of_chars(chars, count)
