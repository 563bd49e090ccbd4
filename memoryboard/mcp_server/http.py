"""``/mcp/``: the MCP server's streamable HTTP transport, served by the (WSGI) dashboard.

The SDK's transport is an ASGI application. Each dashboard process runs it once, stateless and
answering in JSON (``stateless_http=True, json_response=True``), on an event loop in one background
thread; this Django view authenticates the request (``Authorization: Bearer <API token>``), hands
it to that application and returns its answer. Stateless JSON answers keep every request short, so
a synchronous gunicorn worker is never held by a long-lived stream: ``GET`` (the optional
server-to-client stream) is answered 405, as the transport allows. See docs/decisions.md.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from typing import Any

from django.http import HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from mcp.server.transport_security import TransportSecuritySettings

from memoryboard.mcp_server.server import build_server
from memoryboard.mcp_server.tools import InvalidToken, McpError, McpIdentity, identity_for_token
from memoryboard.shared.errors import error_body

IDENTITY_SCOPE_KEY = "memoryboard.mcp_identity"
PATH = "/mcp"
REQUEST_TIMEOUT_SECONDS = 120


def identity_from_request(ctx) -> McpIdentity:
    """The identity the view put into the ASGI scope of this request."""
    request = ctx.request_context.request
    identity = getattr(request, "scope", {}).get(IDENTITY_SCOPE_KEY)
    if identity is None:  # never reached through the view; refuse rather than guess a user
        raise McpError("not authenticated")
    return identity


class _AsgiHost:
    """One event loop thread running the MCP application and its session manager, per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._app = None
        self._pid: int | None = None

    def _start(self) -> None:
        server = build_server(identity_of=identity_from_request)
        app = server.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True,
            # Django has checked the Host header (ALLOWED_HOSTS) already.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="mcp-http", daemon=True).start()
        started: concurrent.futures.Future = concurrent.futures.Future()

        async def run_session_manager() -> None:
            async with server.session_manager.run():
                started.set_result(True)
                await asyncio.Event().wait()  # for the life of the process

        asyncio.run_coroutine_threadsafe(run_session_manager(), loop)
        started.result(timeout=30)
        self._loop, self._app, self._pid = loop, app, os.getpid()

    def call(self, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():  # a forked worker starts its own
                self._start()
        future = asyncio.run_coroutine_threadsafe(self._request(scope, body), self._loop)
        return future.result(timeout=REQUEST_TIMEOUT_SECONDS)

    async def _request(self, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        sent_body = False
        done = asyncio.Event()
        status = 500
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status, headers = message["status"], list(message.get("headers") or [])
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    done.set()

        await self._app(scope, receive, send)
        done.set()
        return status, headers, b"".join(chunks)


_host = _AsgiHost()


def _scope(request, identity: McpIdentity) -> dict[str, Any]:
    host, _, port = request.get_host().partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()],
        "client": (request.META.get("REMOTE_ADDR") or "", 0),
        "server": (host, int(port or (443 if request.is_secure() else 80))),
        IDENTITY_SCOPE_KEY: identity,
    }


def _unauthorized(message: str) -> JsonResponse:
    response = JsonResponse(error_body("not_authenticated", message), status=401)
    response["WWW-Authenticate"] = 'Bearer realm="memoryboard"'
    return response


@csrf_exempt
def mcp_endpoint(request):
    """POST a JSON-RPC message with ``Authorization: Bearer <API token>``; the answer is the MCP server's."""
    if request.method != "POST":
        response = JsonResponse(error_body("method_not_allowed", _("Use POST (stateless streamable HTTP).")), status=405)
        response["Allow"] = "POST"
        return response
    keyword, _sep, key = request.headers.get("Authorization", "").partition(" ")
    if keyword.lower() != "bearer" or not key.strip():
        return _unauthorized(_("Send Authorization: Bearer <API token>."))
    try:
        identity = identity_for_token(key=key.strip())
    except InvalidToken:
        return _unauthorized(_("Invalid token."))
    except McpError as exc:
        return JsonResponse(error_body("misconfigured", str(exc)), status=503)
    try:
        status, headers, body = _host.call(_scope(request, identity), request.body)
    except concurrent.futures.TimeoutError:
        return JsonResponse(error_body("timeout", _("The MCP request took too long.")), status=504)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length", b"connection", b"transfer-encoding"):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
