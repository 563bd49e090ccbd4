"""Chat models: one for OpenAI-compatible endpoints and a deterministic offline one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from django.conf import settings
from openai.types.chat import ChatCompletion

from memoryboard.jsonguard import JSONGuardError, check_json_value, parse_json
from memoryboard.llm.errors import LLMError
from memoryboard.llm.openai_client import clean_model_text, first_message, openai_errors

if TYPE_CHECKING:
    import openai


@dataclass
class ToolCall:
    """A tool call requested by the model.

    Attributes:
        id: the call id to answer with a ``tool`` message.
        name: the function name.
        arguments: the JSON-parsed arguments; ``{}`` when they were not a JSON object.
        error: why the arguments could not be parsed, else None.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    error: str | None = None
    # The arguments exactly as the model wrote them, when known (an encoding detail: not compared).
    raw_arguments: str | None = field(default=None, compare=False, repr=False)

    def to_dict(self, *, raw: bool = False) -> dict[str, Any]:
        """The call in the OpenAI message format (arguments as a JSON string; ``raw``: as the model wrote them)."""
        arguments = self.raw_arguments if raw and self.raw_arguments is not None else json.dumps(self.arguments, ensure_ascii=False)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": arguments}}


@dataclass
class ChatReply:
    """What the model answered: text and/or tool calls."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)

    def to_message(self) -> dict[str, Any]:
        """The reply as an assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        return message


@runtime_checkable
class ChatModel(Protocol):
    """A chat model.

    Attributes:
        name: model name, shown in the UI.
        is_offline: True when no network is involved.
    """

    name: str
    is_offline: bool

    def complete(self, messages: list[dict], *, tools: list[dict] | None = None) -> ChatReply:
        """Answer ``messages`` (OpenAI message dicts), optionally offering ``tools`` (OpenAI tool specs).

        Raises:
            LLMError: when the call fails or the answer cannot be read.
        """
        ...


def parse_tool_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Arguments of a tool call as a dict, and an error text when they are not a JSON object."""
    if raw is None or raw == "":
        return {}, None
    try:
        if isinstance(raw, dict):
            check_json_value(raw, field="arguments")
            return raw, None
        if not isinstance(raw, (str, bytes, bytearray)):
            return {}, f"arguments are not JSON text but {type(raw).__name__}"
        value = parse_json(raw, field_prefix="arguments")  # depth, finite numbers, lone surrogates
    except JSONGuardError as exc:
        return {}, f"arguments are not valid: {exc}"
    if not isinstance(value, dict):
        return {}, f"arguments are not a JSON object but {type(value).__name__}"
    return value, None


REPLY_TOO_LARGE = "reply too large"


def check_reply_size(reply: ChatReply) -> None:
    """Refuse a reply longer than ``MEMORYBOARD_MAX_REPLY_CHARS`` (text and tool-call arguments): it
    would be stored in ``chat_message``, and a row over the database's packet limit (MariaDB's
    ``max_allowed_packet``, 16 MB by default) fails as if the database were down.

    Raises:
        LLMError: reason ``"reply too large"``.
    """
    limit = settings.MEMORYBOARD_MAX_REPLY_CHARS
    size = len(reply.content) + sum(len(call.raw_arguments or "") + len(call.name) for call in reply.tool_calls)
    if size > limit:
        raise LLMError(REPLY_TOO_LARGE, f"{size} characters; the limit is {limit}")


def _completion_type():
    return ChatCompletion


class OpenAIChatModel:
    """Chat completions of an OpenAI-compatible endpoint.

    Args:
        client: an ``openai.OpenAI`` client.
        model: the chat model name.
    """

    is_offline = False

    def __init__(self, client: openai.OpenAI, model: str) -> None:
        self.client = client
        self.model = model
        self.name = model

    def complete(self, messages: list[dict], *, tools: list[dict] | None = None) -> ChatReply:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        with openai_errors():
            # ``chat.completions.create`` minus its ``maybe_transform`` of the body against the SDK's
            # TypedDicts, which turns JSON-ready dicts into equal dicts: 4.4 → 2.3 ms of CPU per call of
            # the proxy benchmark's turn (system prompt, question, the 2 memory tools; benchmarks/README.md
            # § Proxy CPU per request). The same request, client, retries, errors and ``ChatCompletion``.
            response = self.client.post("/chat/completions", body=body, cast_to=_completion_type(),
                                        options={"security": {"bearer_auth": True}})
            message = first_message(response)
            calls = []
            for index, raw in enumerate(getattr(message, "tool_calls", None) or []):
                function = getattr(raw, "function", None)
                name = getattr(function, "name", None)
                if not isinstance(name, str) or not name:
                    raise LLMError("malformed response", "tool call without a function name")
                raw_arguments = getattr(function, "arguments", None)
                if isinstance(raw_arguments, str):
                    raw_arguments = clean_model_text(raw_arguments)
                arguments, error = parse_tool_arguments(raw_arguments)
                calls.append(ToolCall(id=clean_model_text(getattr(raw, "id", None) or f"call_{index}"),
                                      name=clean_model_text(name), arguments=arguments, error=error,
                                      raw_arguments=raw_arguments if isinstance(raw_arguments, str) else None))
            reply = ChatReply(content=clean_model_text(message.content), tool_calls=calls)
        check_reply_size(reply)
        return reply

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r})"
