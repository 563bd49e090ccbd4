"""The API reference: every endpoint under a tag of its area with a summary, and the schema readable in a
browser.

``postprocess_schema`` (drf-spectacular's ``POSTPROCESSING_HOOKS``) tags each operation by its path, gives
the few operations without a summary one, and adds the endpoints that are not DRF serializers' views,
described by hand: the OpenAI-compatible ``/v1/chat/completions`` and ``/v1/models`` and the MCP endpoint
``/mcp/`` (their bodies follow OpenAI's and MCP's own specifications, linked from the descriptions).

``SchemaView`` serves ``/api/schema/``: the OpenAPI document as before to clients, and to a browser that
asks for HTML a page that shows it (instead of a file download).
"""

from __future__ import annotations

import json

from django.shortcuts import render
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView

# (path prefix, tag), first match wins.
TAG_BY_PREFIX = [
    ("/api/v1/memories/import", "Import"),
    ("/api/v1/memories", "Memories"),
    ("/api/v1/conversations", "Conversations"),
    ("/api/v1/strategies", "Strategies"),
    ("/api/v1/agents", "Agents"),
    ("/api/v1/me/", "My data"),
    ("/api/v1/auth/", "Authentication"),
    ("/api/v1/health", "Service"),
    ("/api/v1/ping", "Service"),
    ("/v1/", "OpenAI-compatible"),
    ("/mcp", "MCP"),
]
TAGS = [
    {"name": "Memories", "description": "Long-term memory items: list, search, change, archive, restore, delete."},
    {"name": "Import", "description": "Importing memory items from a file exported by memoryboard or another tool."},
    {"name": "Conversations", "description": "Stored conversations and their messages."},
    {"name": "Strategies", "description": "Context strategies (shape the messages sent to a model) and memory "
                                          "strategies (change a stored conversation)."},
    {"name": "Agents", "description": "A turn of an agent of agents.yaml, with its long-term memory."},
    {"name": "My data", "description": "Everything stored about the caller: export and erase."},
    {"name": "Authentication", "description": "API tokens."},
    {"name": "Service", "description": "Health and reachability."},
    {"name": "OpenAI-compatible", "description": "The agents as OpenAI models: use the official openai client "
                                                 "with base_url=<site>/v1 and an API token as the key."},
    {"name": "MCP", "description": "The memory tools over the Model Context Protocol (stateless streamable HTTP)."},
]
# Summaries for the operations whose views do not give one (method, path).
SUMMARIES = {
    ("post", "/api/v1/agents/{agent}/chat/"): "One chat turn of an agent, with its long-term memory",
    ("post", "/api/v1/auth/token/"): "Get the caller's API token (user name and password)",
    ("get", "/api/v1/health/"): "Health of the service and its database",
    ("get", "/api/v1/ping/"): "Reachability check",
    ("post", "/api/v1/memories/import/"): "Import memory items (a dry run first, then the import)",
}
_ERROR = {"$ref": "#/components/schemas/HandDescribedError"}
_JSON_OBJECT = {"type": "object", "additionalProperties": True}


def _response(description: str, schema: dict | None = None) -> dict:
    out: dict = {"description": description}
    if schema is not None:
        out["content"] = {"application/json": {"schema": schema}}
    return out


def _errors(*codes: int) -> dict:
    words = {400: "Bad input (the field is named)", 401: "Not authenticated", 403: "Not allowed",
             404: "Unknown model", 405: "Method not allowed", 409: "The conversation belongs to someone else",
             429: "Too many requests", 502: "The language model failed", 503: "Not available", 504: "Too slow"}
    return {str(code): _response(words[code], _ERROR) for code in codes}


HAND_DESCRIBED = {
    "/v1/models": {
        "get": {
            "operationId": "openai_models_list",
            "summary": "The agents of agents.yaml as OpenAI models",
            "description": "As OpenAI's `GET /v1/models`: each agent id is a model id for Chat Completions.",
            "security": [{"bearerAuth": []}],
            "responses": {"200": _response("The models", _JSON_OBJECT), **_errors(401, 403)},
        },
    },
    "/v1/chat/completions": {
        "post": {
            "operationId": "openai_chat_completions_create",
            "summary": "One Chat Completions request, run as a turn of the agent for the token's user",
            "description": (
                "The body and the answer follow OpenAI's Chat Completions API (`model` is an agent id of "
                "`GET /v1/models`; `stream` is supported). The user comes from the API token, never from "
                "the body. The conversation is named by the `X-Memoryboard-Conversation-Id` header or "
                "`metadata.conversation_id`; every answer names it in the same header."
            ),
            "security": [{"bearerAuth": []}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["model", "messages"], "additionalProperties": True,
                "properties": {
                    "model": {"type": "string", "description": "An agent id of GET /v1/models"},
                    "messages": {"type": "array", "items": _JSON_OBJECT},
                    "stream": {"type": "boolean"},
                },
            }}}},
            "responses": {
                "200": {"description": "The completion (or a stream of server-sent events)",
                        "content": {"application/json": {"schema": _JSON_OBJECT},
                                    "text/event-stream": {"schema": {"type": "string"}}}},
                **_errors(400, 401, 403, 404, 409, 429, 502, 503, 504),
            },
        },
    },
    "/mcp/": {
        "post": {
            "operationId": "mcp_message",
            "summary": "One MCP JSON-RPC message (memory tools), stateless streamable HTTP",
            "description": (
                "Send a JSON-RPC message of the Model Context Protocol with `Authorization: Bearer <API token>` "
                "(`initialize`, `tools/list`, `tools/call`); the answer is the MCP server's, as JSON or as "
                "server-sent events. The tools act on the token user's own memories."
            ),
            "security": [{"bearerAuth": []}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _JSON_OBJECT}}},
            "responses": {
                "200": {"description": "The JSON-RPC answer",
                        "content": {"application/json": {"schema": _JSON_OBJECT},
                                    "text/event-stream": {"schema": {"type": "string"}}}},
                "202": {"description": "A notification, accepted"},
                **_errors(400, 401, 405, 503, 504),
            },
        },
    },
}


def _tag(path: str) -> str:
    return next((tag for prefix, tag in TAG_BY_PREFIX if path.startswith(prefix)), "Service")


def postprocess_schema(result, generator, request, public):
    """Tags per area, a summary on every operation, and the hand-described endpoints."""
    paths = result.setdefault("paths", {})
    for path, item in HAND_DESCRIBED.items():
        paths.setdefault(path, json.loads(json.dumps(item)))  # a copy: the hook runs for every request
    for path, item in paths.items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            operation["tags"] = [_tag(path)]
            if not operation.get("summary"):
                operation["summary"] = SUMMARIES.get((method, path)) or operation.get("operationId", "").replace(
                    "_", " ").capitalize()
    used = {operation["tags"][0] for item in paths.values() for operation in item.values()
            if isinstance(operation, dict) and operation.get("tags")}
    result["tags"] = [tag for tag in TAGS if tag["name"] in used]
    components = result.setdefault("components", {})
    components.setdefault("schemas", {})["HandDescribedError"] = {
        "type": "object", "additionalProperties": True,
        "description": "memoryboard's error (`{\"error\": {\"code\", \"message\", \"fields\"}}`), or OpenAI's "
                       "error shape under /v1/.",
    }
    components.setdefault("securitySchemes", {}).setdefault(
        "bearerAuth", {"type": "http", "scheme": "bearer", "description": "An API token as a bearer token"})
    return result


def _wants_html(request) -> bool:
    accept = request.headers.get("Accept", "")
    return "text/html" in accept and not request.GET.get("format")


class SchemaView(SpectacularAPIView):
    """``/api/schema/``: the OpenAPI document; a browser asking for HTML gets it shown on a page."""

    def perform_content_negotiation(self, request, force=False):
        # A browser (Accept: text/html) gets the page, or with ?format= the document it asked for: never a 406.
        wanted = request.query_params.get("format")
        for renderer in self.get_renderers():
            if wanted and renderer.format == wanted:
                return renderer, renderer.media_type
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        if not _wants_html(request):
            return super().get(request, *args, **kwargs)
        response = super().get(request, *args, **kwargs)
        document = json.dumps(response.data, indent=2, ensure_ascii=False)
        return render(request, "drf_spectacular/schema_page.html", {"document": document})
