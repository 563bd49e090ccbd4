"""Refuse request bodies above the limit before anything reads them.

The limit is ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (``MEMORYBOARD_MAX_BODY_BYTES``), except on the strategy
endpoints (``/api/v1/strategies/``), which take whole agent traces: ``MEMORYBOARD_STRATEGY_MAX_BODY_BYTES``.
"""

from __future__ import annotations

from io import BytesIO

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.middleware.locale import LocaleMiddleware
from django.utils import translation

from memoryboard.shared.errors import (
    API_LOCALE_PREFIXES,
    body_limit_for,
    body_too_large_message,
    body_too_large_response,
)


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
        raise RequestDataTooBig(body_too_large_message(limit))
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


class ApiLocaleMiddleware(LocaleMiddleware):
    """Django's ``LocaleMiddleware``, except that an API client that names no language gets English.

    The site's default language (``LANGUAGE_CODE``, Simplified Chinese) is for people in a browser, which
    always sends ``Accept-Language``. Under the API prefixes (``/api/``, ``/v1/``, ``/mcp/``) a request
    with neither that header nor the language cookie is a program (``curl``, the ``openai`` client, an
    agent): its error messages come in ``MEMORYBOARD_API_DEFAULT_LANGUAGE`` (default ``en``). A client
    that asks for a language (header or cookie) gets it, as everywhere else; pages are unchanged.
    """

    def process_request(self, request):
        if (request.path.startswith(API_LOCALE_PREFIXES) and "HTTP_ACCEPT_LANGUAGE" not in request.META
                and settings.LANGUAGE_COOKIE_NAME not in request.COOKIES):
            language = settings.MEMORYBOARD_API_DEFAULT_LANGUAGE
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
            return None
        return super().process_request(request)
