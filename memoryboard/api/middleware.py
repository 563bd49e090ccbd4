"""Refuse request bodies above the limit before anything reads them.

The limit is ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (``MEMORYBOARD_MAX_BODY_BYTES``), except on the strategy
endpoints (``/api/v1/strategies/``), which take whole agent traces: ``MEMORYBOARD_STRATEGY_MAX_BODY_BYTES``.
"""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.utils.translation import gettext as _


def body_too_large_message(limit: int) -> str:
    return _("The request body is larger than the limit of %(limit)d bytes.") % {"limit": limit}


def body_too_large_response(limit: int) -> JsonResponse:
    """The API's JSON error for an oversized body (HTTP 413)."""
    from memoryboard.api.exceptions import error_body

    return JsonResponse(error_body("request_too_large", body_too_large_message(limit)), status=413)


STRATEGY_PATH_PREFIX = "/api/v1/strategies/"


def body_limit_for(path: str) -> int | None:
    """The body size limit of a request path (``None``: no limit)."""
    if path.startswith(STRATEGY_PATH_PREFIX):
        return settings.MEMORYBOARD_STRATEGY_MAX_BODY_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def read_body_within(request, limit: int | None) -> None:
    """Read the body of ``request`` (a Django request) under ``limit`` instead of DATA_UPLOAD_MAX_MEMORY_SIZE.

    Django's ``request.body`` refuses anything above DATA_UPLOAD_MAX_MEMORY_SIZE, and DRF's parsers go
    through it. A view with its own, larger limit calls this after authentication (an anonymous client
    cannot make the server read a large body) and before ``request.data``; the Content-Length was already
    checked against ``limit`` by the middleware. It sets ``_body`` as Django's own ``body`` property does.
    """
    if hasattr(request, "_body") or getattr(request, "_read_started", False):
        return
    length = int(request.META.get("CONTENT_LENGTH") or 0)
    if limit is not None and length > limit:
        from django.core.exceptions import RequestDataTooBig

        raise RequestDataTooBig(body_too_large_message(limit))
    from io import BytesIO

    request._body = request.read()
    request._stream = BytesIO(request._body)


class BodySizeLimitMiddleware:
    """Answer 413 with the one JSON error shape when the declared body size is above the limit.

    Django checks the limit only when ``request.body`` or POST data is read, and then answers 400;
    DRF's parsers read the stream directly and would not check it at all.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = body_limit_for(request.path)
        if limit is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                return body_too_large_response(limit)
        return self.get_response(request)
