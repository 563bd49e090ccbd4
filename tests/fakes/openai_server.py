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

FAULTS = ("timeout", "malformed", "empty_choices", "bad_tool_args")
_HTTP_FAULT = re.compile(r"^http(\d{3})$")


class FakeOpenAI:
    """OpenAI-compatible server on 127.0.0.1 (ephemeral port), served from a daemon thread.

    Args:
        embedding_dim: dimension of the vectors of ``/v1/embeddings`` unless the request asks for
            ``dimensions``.
        timeout_delay: seconds the ``"timeout"`` fault waits before answering.
    """

    def __init__(self, *, embedding_dim: int = 64, timeout_delay: float = 3.0) -> None:
        self.embedding_dim = embedding_dim
        self.timeout_delay = timeout_delay
        self.requests: list[dict[str, Any]] = []
        self._replies: deque[dict[str, Any]] = deque()
        self._faults: deque[str] = deque()
        self._fault: str | None = None
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
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
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

    def _record(self, path: str, body: Any, headers: dict[str, str]) -> tuple[str | None, dict | None, threading.Event]:
        with self._lock:
            self.requests.append({"path": path, "body": body, "headers": headers})
            fault = self._faults.popleft() if self._faults else self._fault
            reply = None
            if path.endswith("/chat/completions") and fault is None and self._replies:
                reply = self._replies.popleft()
            return fault, reply, self._wake

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
        fault, reply, wake = self.fake._record(path, body, headers)

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
            self._send_json(200, self.fake.chat_response(body, reply, fault))
        elif path.endswith("/embeddings"):
            self._send_json(200, self.fake.embeddings_response(body, fault))
        else:
            self._send_json(404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error"}})

    def _send_json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
