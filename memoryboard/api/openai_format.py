"""OpenAI Chat Completions shapes: the request read and checked, the answer and its stream chunks built.

Errors name the field as the rest of the API does (``messages[2].tool_calls[0].id``); the views give
them OpenAI's error shape (``message``, ``type``, ``param``, ``code``) next to the project's ``fields``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from memoryboard.api.exceptions import ApplicationError
from memoryboard.conversations import conversation_id_problem
from memoryboard.strategies.tokens import estimated_tokens

ROLES = ("system", "developer", "user", "assistant", "tool")
CONVERSATION_HEADER = "X-Memoryboard-Conversation-Id"
CONVERSATION_METADATA_KEY = "conversation_id"
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Characters per content delta of a stream (the reply is complete before the stream starts).
STREAM_PIECE_CHARS = 16


@dataclass
class CompletionRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False
    conversation_id: str | None = None


def _bad(field_name: str, message: str) -> ApplicationError:
    return ApplicationError(message, field=field_name)


def _check_content(content: Any, where: str, *, allow_null: bool) -> None:
    if content is None:
        if not allow_null:
            raise _bad(f"{where}.content", _("This field is required."))
        return
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _bad(f"{where}.content", _("Content must be a string, null or a list of parts."))
    for index, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise _bad(f"{where}.content[{index}].type", _("Each content part must be an object with a type."))
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            raise _bad(f"{where}.content[{index}].text", _("A text part needs a text string."))


def _check_tool_calls(calls: Any, where: str) -> None:
    if not isinstance(calls, list):
        raise _bad(f"{where}.tool_calls", _("Expected a list."))
    for index, call in enumerate(calls):
        at = f"{where}.tool_calls[{index}]"
        if not isinstance(call, dict):
            raise _bad(at, _("Expected an object."))
        if not isinstance(call.get("id"), str) or not call["id"]:
            raise _bad(f"{at}.id", _("This field is required."))
        function = call.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise _bad(f"{at}.function.name", _("This field is required."))
        if not isinstance(function.get("arguments", ""), str):
            raise _bad(f"{at}.function.arguments", _("Arguments must be a JSON string."))


def _check_message(message: Any, index: int) -> dict[str, Any]:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise _bad(where, _("Each message must be an object."))
    role = message.get("role")
    if role not in ROLES:
        raise _bad(f"{where}.role", _("Unknown role; use one of %(roles)s.") % {"roles": ", ".join(ROLES)})
    if role == "assistant":
        _check_content(message.get("content"), where, allow_null=True)
        if "tool_calls" in message and message["tool_calls"] is not None:
            _check_tool_calls(message["tool_calls"], where)
    else:
        _check_content(message.get("content"), where, allow_null=False)
    if role == "tool" and (not isinstance(message.get("tool_call_id"), str) or not message["tool_call_id"]):
        raise _bad(f"{where}.tool_call_id", _("This field is required."))
    if role == "developer":  # OpenAI's newer name for the system prompt; the runtime knows "system"
        message = {**message, "role": "system"}
    return message


def _check_tool_results_answer_calls(messages: list[dict[str, Any]]) -> None:
    """An assistant message's tool calls and the ``tool`` messages right after it are one unit, both ways:
    each ``tool`` message answers a call of the assistant message before it, and each call is answered
    before the next message of another role. The upstream refuses either orphan with a 400 of its own,
    which would reach the client as a 502 after the turn was stored."""
    open_calls: dict[str, tuple[int, int]] = {}  # call id -> (message, call) positions, until answered

    def close_unit() -> None:
        if open_calls:
            index, position = min(open_calls.values())
            call_id = messages[index]["tool_calls"][position]["id"]
            raise _bad(f"messages[{index}].tool_calls[{position}].id", _(
                "A tool call must be answered by a tool message right after its assistant message; "
                "no result for %(id)s.") % {"id": call_id})

    answerable: set[str] = set()
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            if message["tool_call_id"] not in answerable:
                raise _bad(f"messages[{index}].tool_call_id", _(
                    "A tool message must answer a tool call of the assistant message before it; "
                    "no such call %(id)s.") % {"id": message["tool_call_id"]})
            open_calls.pop(message["tool_call_id"], None)
            continue
        close_unit()
        calls = (message.get("tool_calls") or []) if message["role"] == "assistant" else []
        open_calls = {call["id"]: (index, position) for position, call in enumerate(calls)}
        answerable = set(open_calls)
    close_unit()


def _check_tools(tools: Any) -> list[dict[str, Any]]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise _bad("tools", _("Expected a list."))
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        at = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            raise _bad(f"{at}.type", _("Only function tools are supported."))
        function = tool.get("function")
        if not isinstance(function, dict):
            raise _bad(f"{at}.function", _("This field is required."))
        name = function.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise _bad(f"{at}.function.name", _("A tool name is 1 to 64 letters, digits, '_' or '-'."))
        if name in seen:
            raise _bad(f"{at}.function.name", _("Tool names must be unique."))
        seen.add(name)
        if "parameters" in function and not isinstance(function["parameters"], dict):
            raise _bad(f"{at}.function.parameters", _("Expected an object."))
    return tools


def parse_completion_request(data: Any, *, header_conversation: str | None) -> CompletionRequest:
    """Check a Chat Completions body. ``user`` and the sampling options are accepted and ignored.

    Raises:
        ApplicationError: a 400 naming the field at fault.
    """
    if not isinstance(data, dict):
        raise _bad("non_field_errors", _("The body must be a JSON object."))
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model", _("This field is required."))
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages", _("A non-empty list of messages is required."))
    checked = [_check_message(message, index) for index, message in enumerate(messages)]
    _check_tool_results_answer_calls(checked)
    if checked[-1]["role"] not in ("user", "tool"):
        raise _bad(f"messages[{len(checked) - 1}].role", _("The last message must be a user or tool message."))
    stream = data.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise _bad("stream", _("Must be a boolean."))
    options = data.get("stream_options") or {}
    if not isinstance(options, dict):
        raise _bad("stream_options", _("Expected an object."))
    n = data.get("n")
    if n is not None and n != 1:
        raise _bad("n", _("Only one choice (n=1) is supported."))
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise _bad("metadata", _("Expected an object."))
    from_body = metadata.get(CONVERSATION_METADATA_KEY)
    if from_body not in (None, "") and (problem := conversation_id_problem(from_body)):
        raise _bad("metadata.conversation_id", problem)
    if header_conversation not in (None, "") and (problem := conversation_id_problem(header_conversation)):
        raise _bad(CONVERSATION_HEADER, problem)
    if from_body and header_conversation and from_body != header_conversation:
        raise _bad("metadata.conversation_id", _("Differs from the %(header)s header.") % {"header": CONVERSATION_HEADER})
    return CompletionRequest(
        model=model,
        messages=checked,
        tools=_check_tools(data.get("tools")),
        stream=bool(stream),
        include_usage=bool(options.get("include_usage")),
        conversation_id=(from_body or header_conversation or None),
    )


# --- answers -------------------------------------------------------------------------------------


def _usage(messages: list[dict], reply: str, calls: list[dict]) -> dict[str, int]:
    """Token counts by the project's one estimate (the upstream's own counts are not passed on)."""
    prompt = sum(estimated_tokens(json.dumps(m.get("content"), ensure_ascii=False)) for m in messages)
    completion = estimated_tokens(reply + "".join(c["function"]["arguments"] for c in calls))
    return {"prompt_tokens": int(prompt), "completion_tokens": int(completion), "total_tokens": int(prompt + completion)}


def _extra(result) -> dict[str, Any]:
    turn = result.turn
    return {
        "conversation_id": result.conversation_id,
        "memories_used": [item.memory.pk for item in turn.memories_used],
        "memory_tool_calls": len(turn.tool_calls),
        "extraction": turn.extraction,
    }


def completion_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex


def completion_body(result, *, messages: list[dict]) -> dict[str, Any]:
    """The ``chat.completion`` object; memoryboard's own facts under ``memoryboard``."""
    turn = result.turn
    calls = turn.client_tool_calls
    message: dict[str, Any] = {"role": "assistant", "content": turn.reply if (turn.reply or not calls) else None,
                               "refusal": None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": result.agent_id,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                     "logprobs": None}],
        "usage": _usage(messages, turn.reply, calls),
        "memoryboard": _extra(result),
    }


def completion_chunks(result, *, messages: list[dict], include_usage: bool) -> Iterator[bytes]:
    """The answer as server-sent events in OpenAI's ``chat.completion.chunk`` format, then ``[DONE]``."""
    turn = result.turn
    calls = turn.client_tool_calls
    base = {"id": completion_id(), "object": "chat.completion.chunk", "created": int(time.time()),
            "model": result.agent_id}

    def event(choices: list[dict], **extra: Any) -> bytes:
        payload = {**base, "choices": choices, **extra}
        return b"data: " + json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n\n"

    def delta(value: dict[str, Any], finish: str | None = None) -> list[dict]:
        return [{"index": 0, "delta": value, "finish_reason": finish, "logprobs": None}]

    yield event(delta({"role": "assistant", "content": ""}), memoryboard=_extra(result))
    text = turn.reply or ""
    for start in range(0, len(text), STREAM_PIECE_CHARS):
        yield event(delta({"content": text[start:start + STREAM_PIECE_CHARS]}))
    for index, call in enumerate(calls):
        yield event(delta({"tool_calls": [{"index": index, **call}]}))
    yield event(delta({}, "tool_calls" if calls else "stop"))
    if include_usage:
        yield event([], usage=_usage(messages, text, calls))
    yield b"data: [DONE]\n\n"


def openai_error(body: dict[str, Any], status: int) -> dict[str, Any]:
    """The project's error body given OpenAI's fields too: ``type`` and ``param`` next to ``fields``."""
    error = dict(body.get("error") or {})
    fields = error.get("fields") or {}
    if status == 401:
        kind = "authentication_error"
    elif status == 403:
        kind = "permission_error"
    elif status == 404:
        kind = "not_found_error"
    elif status >= 500:
        kind = "api_error"
    else:
        kind = "invalid_request_error"
    error.setdefault("message", "")
    error["type"] = kind
    error["param"] = next(iter(fields), None)
    error.setdefault("fields", fields)
    return {**body, "error": error}
