"""Construction of the ``openai`` client and translation of its errors into :class:`LLMError`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai

from memoryboard.llm.errors import LLMError

# Local OpenAI-compatible servers often accept any key; the client refuses an empty one.
PLACEHOLDER_API_KEY = "not-needed"

# Code points no UTF-8 text can hold: the surrogates, which JSON lets a reply carry as ``"\ud800"``
# escapes (alone, or in a pair the wrong way round). Stored, they fail the database driver.
_UNENCODABLE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def clean_model_text(text: Any) -> str:
    """The one cleaning step of what a model returns (chat replies and their tool calls, the judge's
    verdict, extracted items, summaries), before anything of it is stored or answered: text, with each
    code point UTF-8 cannot hold (a lone surrogate) replaced by U+FFFD. ``None`` is ``""``.

    Example:
        >>> clean_model_text("ok \ud800")
        'ok \ufffd'
    """
    text = "" if text is None else str(text)
    return _UNENCODABLE.sub(REPLACEMENT, text) if _UNENCODABLE.search(text) else text


def clean_model_value(value: Any) -> Any:
    """:func:`clean_model_text` over every string (keys too) of a value parsed from a model's JSON answer:
    ``json.loads`` turns a ``"\ud800"`` escape of a clean text into a lone surrogate."""
    if isinstance(value, str):
        return clean_model_text(value)
    if isinstance(value, list):
        return [clean_model_value(item) for item in value]
    if isinstance(value, dict):
        return {clean_model_text(key): clean_model_value(item) for key, item in value.items()}
    return value


def make_client(
    *, base_url: str, api_key: str, timeout: float, max_retries: int
) -> openai.OpenAI:
    """Build a synchronous client for an OpenAI-compatible endpoint.

    Args:
        base_url: endpoint root, e.g. ``http://127.0.0.1:8001/v1``.
        api_key: the key; an empty one is replaced by a placeholder.
        timeout: seconds per request.
        max_retries: retries of the client on connection errors, 408/409/429 and 5xx.
    """
    return openai.OpenAI(
        base_url=base_url,
        api_key=api_key or PLACEHOLDER_API_KEY,
        timeout=timeout,
        max_retries=max_retries,
    )


def llm_error_from(exc: BaseException) -> LLMError:
    """Map an exception raised by the ``openai`` client (or by reading its result) to LLMError."""
    if isinstance(exc, LLMError):
        return exc
    # Order matters: APITimeoutError is an APIConnectionError.
    if isinstance(exc, openai.APITimeoutError):
        return LLMError("timeout", str(exc))
    if isinstance(exc, openai.APIConnectionError):
        return LLMError("connection error", str(exc))
    if isinstance(exc, openai.APIStatusError):
        return LLMError(f"HTTP {exc.status_code}", _short(exc.message))
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMError("malformed response", _short(str(exc)))
    if isinstance(exc, openai.OpenAIError):
        return LLMError("API error", _short(str(exc)))
    if isinstance(exc, ValueError) and "no embedding data" in str(exc).lower():
        return LLMError("empty response", str(exc))
    # Invalid JSON bodies, missing fields, wrong types in a loosely constructed response.
    if isinstance(exc, (json.JSONDecodeError, ValueError, TypeError, AttributeError, KeyError, IndexError)):
        return LLMError("malformed response", f"{type(exc).__name__}: {_short(str(exc))}")
    return LLMError("API error", f"{type(exc).__name__}: {_short(str(exc))}")


@contextmanager
def openai_errors() -> Iterator[None]:
    """Turn every failure inside the block into :class:`LLMError`.

    Example:
        with openai_errors():
            response = client.chat.completions.create(...)
            message = first_message(response)
    """
    try:
        yield
    except LLMError:
        raise
    except Exception as exc:  # noqa: BLE001 - everything from the client becomes one type
        raise llm_error_from(exc) from exc


def first_message(response: Any) -> Any:
    """The message of the first choice of a chat completion, validated loosely.

    Raises:
        LLMError: ``"malformed response"`` when the body is not a completion,
            ``"empty response"`` when it has no choices.
    """
    if isinstance(response, (str, bytes)) or not hasattr(response, "choices"):
        raise LLMError("malformed response", "not a chat completion")
    choices = response.choices
    if choices is None:
        raise LLMError("malformed response", "no 'choices' field")
    if not isinstance(choices, list):
        raise LLMError("malformed response", "'choices' is not a list")
    if not choices:
        raise LLMError("empty response", "no choices")
    message = getattr(choices[0], "message", None)
    if message is None or isinstance(message, (str, dict)):
        raise LLMError("malformed response", "choice without a message")
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise LLMError("malformed response", "message content is not text")
    return message


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
