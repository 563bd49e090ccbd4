"""One error shape for the whole API: ``{"error": {"code", "message", "fields"}}``."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class ApplicationError(Exception):
    """An error of memoryboard's own that the API reports with a status and field."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "invalid"

    def __init__(self, message: str, *, field: str | None = None, status_code: int | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        if status_code is not None:
            self.status_code = status_code
        if code is not None:
            self.code = code


def _flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            out.update(_flatten(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            out[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                out.update(_flatten(item, f"{prefix}[{index}]" if prefix else f"[{index}]"))
    else:
        out[prefix or "non_field_errors"] = [str(detail)]
    return out


def exception_handler(exc, context):
    if isinstance(exc, ApplicationError):
        fields = {exc.field: [exc.message]} if exc.field else {}
        return Response(
            {"error": {"code": exc.code, "message": exc.message, "fields": fields}},
            status=exc.status_code,
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        fields = _flatten(exc.detail)
        first_field, messages = next(iter(fields.items()), ("", ["Invalid input."]))
        message = f"{first_field}: {messages[0]}" if first_field != "non_field_errors" else messages[0]
        body = {"error": {"code": "invalid", "message": message, "fields": fields}}
    else:
        detail = getattr(exc, "detail", None)
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        body = {"error": {"code": str(code), "message": str(detail or exc), "fields": {}}}
    response.data = body
    return response
