"""The one error shape, shared by the API (``api.exceptions``), the error pages (``web.errors``), the body
size limit (``api.middleware``) and the MCP endpoint: ``{"error": {"code", "message", "fields"}}``."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.utils.translation import gettext as _

# Paths answered with the API's JSON errors instead of the site's pages.
API_PREFIXES = ("/api/", "/v1/")
# Where a request without Accept-Language is a program, not a person (``api.middleware.ApiLocaleMiddleware``).
API_LOCALE_PREFIXES = (*API_PREFIXES, "/mcp/")
# What a 503 tells the client to wait before trying again (the database was busy or unreachable).
RETRY_AFTER_SECONDS = 2
# The strategy endpoints take whole agent traces: their own body limit.
STRATEGY_PATH_PREFIX = "/api/v1/strategies/"


def error_body(code: str, message: str, fields: dict[str, list[str]] | None = None) -> dict:
    """The JSON body of every API error."""
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def body_too_large_message(limit: int) -> str:
    return _("The request body is larger than the limit of %(limit)d bytes.") % {"limit": limit}


def body_too_large_response(limit: int) -> JsonResponse:
    """The API's JSON error for an oversized body (HTTP 413)."""
    return JsonResponse(error_body("request_too_large", body_too_large_message(limit)), status=413)


def body_limit_for(path: str) -> int | None:
    """The body size limit of a request path (``None``: no limit)."""
    if path.startswith(STRATEGY_PATH_PREFIX):
        return settings.MEMORYBOARD_STRATEGY_MAX_BODY_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE
