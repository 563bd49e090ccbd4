"""A small OpenAI-compatible HTTP server for tests: scripted chat replies, embeddings, injected faults.

Example:
    server = FakeOpenAI()
    server.start()
    client = openai.OpenAI(base_url=server.base_url, api_key="k", timeout=1, max_retries=0)
    server.push_reply(content="hello")
    server.push_reply(tool_calls=[{"name": "memory_save", "arguments": {"content": "x"}}])
    server.push_fault("http500")          # next request only
    server.set_fault("timeout")           # every request until reset() / set_fault(None)
    server.requests[-1]["body"]           # what the client sent
    server.stop()

Chat requests are validated as the OpenAI API does (:func:`chat_messages_error`: roles, content types,
tool calls paired with their ``tool`` results); an invalid request gets OpenAI's 400
``invalid_request_error``, which the ``openai`` client raises as ``BadRequestError``.

Faults: ``"timeout"`` (answers after ``timeout_delay`` seconds, longer than the tests' client timeout),
``"http500"`` (or any ``"http<status>"``), ``"malformed"`` (invalid JSON body), ``"empty_choices"``
(no choices / no embedding data), ``"bad_tool_args"`` (a tool call whose arguments are not JSON).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from tests.ports import bind_in_range

FAULTS = ("timeout", "malformed", "empty_choices", "bad_tool_args")
_HTTP_FAULT = re.compile(r"^http(\d{3})$")


class FakeOpenAI:
    """OpenAI-compatible server on 127.0.0.1 (a free port: ``tests.ports``), served from a daemon thread.

    Args:
        embedding_dim: dimension of the vectors of ``/v1/embeddings`` unless the request asks for
            ``dimensions``.
        timeout_delay: seconds the ``"timeout"`` fault waits before answering.
        chat_delay: seconds every chat completion takes (a model that thinks); embeddings answer at once.
    """

    def __init__(self, *, embedding_dim: int = 64, timeout_delay: float = 3.0, chat_delay: float = 0.0) -> None:
        self.embedding_dim = embedding_dim
        self.timeout_delay = timeout_delay
        self.chat_delay = chat_delay
        self.requests: list[dict[str, Any]] = []
        self._replies: deque[dict[str, Any]] = deque()
        self._faults: deque[str] = deque()
        self._fault: str | None = None
        self._delays: deque[tuple[str, float]] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()  # set on reset/stop: ends pending "timeout" sleeps
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._call_ids = 0

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        if self._httpd is not None:
            return self
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = bind_in_range(lambda port: ThreadingHTTPServer(("127.0.0.1", port), handler))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._wake.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting --------------------------------------------------------------------------

    def push_reply(
        self,
        content: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        *,
        finish_reason: str | None = None,
    ) -> None:
        """Queue the answer of the next chat completion.

        Args:
            content: the assistant text.
            tool_calls: ``[{"name": ..., "arguments": dict or raw str, "id": optional}]``.
            finish_reason: defaults to ``"tool_calls"`` with tool calls, else ``"stop"``.
        """
        with self._lock:
            self._replies.append(
                {"content": content, "tool_calls": list(tool_calls or []), "finish_reason": finish_reason}
            )

    def push_fault(self, fault: str) -> None:
        """Inject ``fault`` into the next request (any endpoint)."""
        self._check_fault(fault)
        with self._lock:
            self._faults.append(fault)

    def push_delay(self, endpoint: str, seconds: float) -> None:
        """Hold the next request to ``endpoint`` (``"chat/completions"`` or ``"embeddings"``) for ``seconds``
        before answering it: work that overlaps something else (an erase, a second writer)."""
        with self._lock:
            self._delays.append((endpoint.strip("/"), seconds))

    def set_fault(self, fault: str | None) -> None:
        """Inject ``fault`` into every request until cleared (None) or reset()."""
        if fault is not None:
            self._check_fault(fault)
        with self._lock:
            self._fault = fault

    def reset(self) -> None:
        """Forget requests, queued replies and faults; end pending "timeout" sleeps."""
        with self._lock:
            self.requests.clear()
            self._replies.clear()
            self._faults.clear()
            self._delays.clear()
            self._fault = None
            self._wake.set()
            self._wake = threading.Event()

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat completion requests received."""
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def embedding_requests(self) -> list[dict[str, Any]]:
        """Bodies of the embedding requests received."""
        return [r["body"] for r in self.requests if r["path"].endswith("/embeddings")]

    @staticmethod
    def _check_fault(fault: str) -> None:
        if fault not in FAULTS and not _HTTP_FAULT.match(fault):
            raise ValueError(f"unknown fault {fault!r}; expected one of {FAULTS} or 'http<status>'")

    # --- request handling (server threads) --------------------------------------------------

    def _record(self, path: str, body: Any, headers: dict[str, str]) -> tuple[str | None, dict | None, threading.Event, float]:
        with self._lock:
            self.requests.append({"path": path, "body": body, "headers": headers})
            fault = self._faults.popleft() if self._faults else self._fault
            delay = next((d for d in self._delays if path.endswith(d[0])), None)
            if delay is not None:
                self._delays.remove(delay)
            reply = None
            if path.endswith("/chat/completions") and fault is None and self._replies:
                reply = self._replies.popleft()
            return fault, reply, self._wake, (delay[1] if delay else 0.0)

    def _next_call_id(self) -> str:
        with self._lock:
            self._call_ids += 1
            return f"call_fake_{self._call_ids}"

    def chat_response(self, body: dict[str, Any], reply: dict[str, Any] | None, fault: str | None) -> dict:
        model = body.get("model", "fake-model")
        if fault == "empty_choices":
            return _completion(model, [])
        if fault == "bad_tool_args":
            reply = {"content": None, "finish_reason": None,
                     "tool_calls": [{"name": "memory_save", "arguments": '{"content": "unterminated'}]}
        if reply is None:
            reply = {"content": default_reply(body.get("messages") or []), "tool_calls": [], "finish_reason": None}
        message: dict[str, Any] = {"role": "assistant", "content": reply["content"]}
        if reply["tool_calls"]:
            message["tool_calls"] = [
                {
                    "id": call.get("id") or self._next_call_id(),
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": call.get("arguments") if isinstance(call.get("arguments"), str)
                        else json.dumps(call.get("arguments") or {}, ensure_ascii=False),
                    },
                }
                for call in reply["tool_calls"]
            ]
        finish = reply["finish_reason"] or ("tool_calls" if reply["tool_calls"] else "stop")
        return _completion(model, [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}])

    def embeddings_response(self, body: dict[str, Any], fault: str | None) -> dict:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        texts = [t if isinstance(t, str) else json.dumps(t) for t in (texts or [])]
        dim = int(body.get("dimensions") or self.embedding_dim)
        data = []
        if fault != "empty_choices":
            vectors = fake_embeddings(texts, dim)
            for index, vector in enumerate(vectors):
                if body.get("encoding_format") == "base64":
                    embedding: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
                else:
                    embedding = [float(x) for x in vector]
                data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(t.split()) for t in texts)
        return {"object": "list", "data": data, "model": body.get("model", "fake-embedding"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


_PART_TYPES = {
    "system": {"text"},
    "developer": {"text"},
    "user": {"text", "image_url", "input_audio", "file"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}


def chat_messages_error(messages: Any) -> tuple[str, str] | None:
    """Why the OpenAI Chat Completions API would refuse ``messages``, as ``(param, message)``; None if valid.

    The rules the API enforces on a request: a non-empty list of objects; a known role; content a string
    or a list of parts of the types that role allows (``null`` only for an assistant message with tool
    calls); well-formed tool calls (id, ``type: function``, a name and string arguments); every assistant
    message with tool calls followed by ``tool`` messages answering each of its call ids, and no ``tool``
    message that does not answer a call of the assistant message before it.
    """
    if not isinstance(messages, list) or not messages:
        return "messages", "'messages' must be a non-empty array"
    pending: set[str] = set()
    answered: set[str] = set()
    for i, m in enumerate(messages):
        at = f"messages.[{i}]"
        if not isinstance(m, dict):
            return at, f"Invalid type for '{at}': expected an object"
        role = m.get("role")
        if role not in _PART_TYPES:
            return f"{at}.role", f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'developer'."
        if role != "tool" and pending:
            return at, ("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                        f"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                        f"{', '.join(sorted(pending))}")
        content = m.get("content")
        if content is None:
            if not (role == "assistant" and (m.get("tool_calls") or m.get("refusal"))):
                return f"{at}.content", f"Invalid value for '{at}.content': expected a string, got null."
        elif isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, dict) or part.get("type") not in _PART_TYPES[role]:
                    return f"{at}.content.[{j}].type", f"Invalid content part type for role '{role}'"
                if part["type"] in ("text", "refusal") and not isinstance(part.get(part["type"]), str):
                    return f"{at}.content.[{j}].{part['type']}", "expected a string"
        elif not isinstance(content, str):
            return f"{at}.content", f"Invalid type for '{at}.content': expected one of a string or array of objects"
        if "tool_calls" in m:
            if role != "assistant":
                return f"{at}.tool_calls", "Only assistant messages can have tool_calls"
            calls = m["tool_calls"]
            if not isinstance(calls, list) or not calls:
                return f"{at}.tool_calls", "'tool_calls' must be a non-empty array"
            ids = set()
            for k, call in enumerate(calls):
                function = call.get("function") if isinstance(call, dict) else None
                if (not isinstance(call, dict) or not isinstance(call.get("id"), str) or call.get("type") != "function"
                        or not isinstance(function, dict) or not isinstance(function.get("name"), str)
                        or not isinstance(function.get("arguments"), str)):
                    return f"{at}.tool_calls.[{k}]", "Invalid tool call"
                ids.add(call["id"])
            pending = ids
            answered = set()
        if role == "tool":
            call_id = m.get("tool_call_id")
            if not isinstance(call_id, str):
                return f"{at}.tool_call_id", "Missing required parameter: 'tool_call_id'."
            if call_id not in pending and call_id not in answered:
                return at, ("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                            "message with 'tool_calls'.")
            pending.discard(call_id)
            answered.add(call_id)
        elif role != "assistant" or "tool_calls" not in m:
            answered = set()
    if pending:
        return f"messages.[{len(messages) - 1}]", (
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(sorted(pending))}"
        )
    return None


def default_reply(messages: list[dict[str, Any]]) -> str:
    """Deterministic answer when nothing is queued: a short 'summary' of the last user message."""
    text = ""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            break
    words = " ".join(text.split())
    return f"Fake summary ({len(text)} chars): {words[:80]}"


def fake_embeddings(texts: list[str], dim: int) -> np.ndarray:
    """Deterministic vectors: the project's offline hashing embedder, at the requested dimension."""
    from memoryboard.llm.embeddings import HashingEmbedder

    vectors = HashingEmbedder(dim=dim).embed(texts)
    # A real model never returns a zero vector (texts without words, e.g. " ").
    vectors[~vectors.any(axis=1), 0] = 1.0
    # Remote vectors are not guaranteed normalized; scale them so clients must normalize.
    return vectors * 3.0


def _completion(model: str, choices: list[dict]) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": "fake-model", "object": "model", "created": 0, "owned_by": "tests"}]})
        else:
            self._send_json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        fault, reply, wake, delay = self.fake._record(path, body, headers)
        if delay:
            wake.wait(delay)

        if fault == "timeout":
            wake.wait(self.fake.timeout_delay)
            # The client has given up by now; answer anyway, ignoring a closed connection.
        if fault is not None and (status := _HTTP_FAULT.match(fault)):
            self._send_json(int(status.group(1)), {"error": {"message": "injected failure", "type": "server_error",
                                                             "code": None, "param": None}})
            return
        if fault == "malformed":
            self._send(200, b'{"id": "chatcmpl-broken", "choices": [{"message": ', "application/json")
            return

        if path.endswith("/chat/completions"):
            if self.fake.chat_delay:
                time.sleep(self.fake.chat_delay)
            invalid = chat_messages_error(body.get("messages"))
            if invalid is not None:
                param, message = invalid
                self._send_json(400, {"error": {"message": message, "type": "invalid_request_error",
                                                "param": param, "code": None}})
                return
            self._send_json(200, self.fake.chat_response(body, reply, fault))
        elif path.endswith("/embeddings"):
            self._send_json(200, self.fake.embeddings_response(body, fault))
        else:
            self._send_json(404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error"}})

    def _send_json(self, status: int, payload: Any) -> None:
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a scripted lone surrogate: sent as the \ud800 escape, as JSON allows
            data = json.dumps(payload).encode("ascii")
        self._send(status, data, "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
