"""Refuse request bodies above DATA_UPLOAD_MAX_MEMORY_SIZE before anything reads them."""

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


class BodySizeLimitMiddleware:
    """Answer 413 with the one JSON error shape when the declared body size is above the limit.

    Django checks the limit only when ``request.body`` or POST data is read, and then answers 400;
    DRF's parsers read the stream directly and would not check it at all.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                return body_too_large_response(limit)
        return self.get_response(request)
