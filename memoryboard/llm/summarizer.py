"""Summaries through a chat model of an OpenAI-compatible endpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoryboard.llm.errors import LLMError
from memoryboard.llm.openai_client import clean_model_text, first_message, openai_errors
from memoryboard.strategies.errors import SummarizerError

if TYPE_CHECKING:
    import openai


class OpenAISummarizer:
    """Implements ``memoryboard.strategies.summarizer.Summarizer`` with one chat completion.

    Args:
        client: an ``openai.OpenAI`` client (see ``make_client``).
        model: the chat model name.
    """

    is_offline = False

    def __init__(self, client: openai.OpenAI, model: str) -> None:
        self.client = client
        self.model = model
        self.name = model

    def summarize(self, text: str, *, instruction: str) -> str:
        """Ask the model to summarize ``text`` following ``instruction`` (the system message).

        Raises:
            SummarizerError: on any failure; ``.reason`` carries the short reason ("timeout", …).
        """
        try:
            with openai_errors():
                response = self.client.chat.completions.create(
                    model=self.model,
                    messages=[
                        {"role": "system", "content": instruction},
                        {"role": "user", "content": text},
                    ],
                )
                content = clean_model_text(first_message(response).content).strip()
            if not content:
                raise LLMError("empty response", "the summary is empty")
        except LLMError as exc:
            raise summarizer_error(exc) from exc
        return content


def summarizer_error(exc: LLMError) -> Exception:
    """Build the strategies' SummarizerError from an LLMError, keeping the reason."""
    # Imported here: the strategies package is framework-free and must not depend on this one.

    try:
        error = SummarizerError(exc.reason)
    except TypeError:  # pragma: no cover - a constructor with other required arguments
        error = SummarizerError(str(exc))
    if getattr(error, "reason", None) != exc.reason:
        try:
            error.reason = exc.reason
        except AttributeError:  # pragma: no cover - read-only attribute
            pass
    return error
