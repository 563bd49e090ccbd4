"""The one error type of the model clients."""

from __future__ import annotations


class LLMError(Exception):
    """A model call failed.

    Attributes:
        reason: short, stable text for logs, the UI and result objects:
            ``"timeout"``, ``"HTTP 500"``, ``"malformed response"``, ``"empty response"``,
            ``"connection error"``, ``"API error"``.
        detail: longer free text (may be empty); never shown as the reason.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)
