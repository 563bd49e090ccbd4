"""One error shape for the whole API: ``{"error": {"code", "message", "fields"}}`` (``shared.errors``).

Views stay thin: the errors of the services and the strategy package are turned into their HTTP
status here, in one place.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memoryboard.conversations import ConversationNotFound, StalePlanError
from memoryboard.llm.chat import REPLY_TOO_LARGE
from memoryboard.llm.errors import LLMError
from memoryboard.ltm.store.erase_gate import UserDataErased
from memoryboard.ltm.store.items import MemoryError
from memoryboard.shared.errors import RETRY_AFTER_SECONDS, body_limit_for, body_too_large_message, error_body
from memoryboard.strategies import StrategyConfigError, StrategyError


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


def turn_llm_failure(reason: str) -> tuple[str, str]:
    """The code and message of an agent turn whose model failed after the user's message was stored."""
    if reason.startswith(REPLY_TOO_LARGE):
        return "llm_reply_too_large", _(
            "The language model's reply is longer than the limit of %(limit)s characters "
            "(MEMORYBOARD_MAX_REPLY_CHARS); it was not stored. Your message was saved.") % {
            "limit": settings.MEMORYBOARD_MAX_REPLY_CHARS}
    return "llm_unavailable", _(
        "The language model is unavailable (%(reason)s). Your message was saved; try again later.") % {"reason": reason}


def _domain_error(exc, context=None) -> ApplicationError | None:
    """Errors of the services and the strategy package, as the API reports them."""
    if isinstance(exc, StrategyConfigError) and exc.field != "name":
        # Parameters arrive under "params" in every request body.
        return ApplicationError(exc.message, field=f"params.{exc.field}")
    if isinstance(exc, StrategyError):
        return ApplicationError(getattr(exc, "message", str(exc)), field=getattr(exc, "field", None))
    if isinstance(exc, MemoryError):
        return ApplicationError(exc.message, field=exc.field)
    if isinstance(exc, ConversationNotFound):
        return ApplicationError("No such conversation.", field="conversation_id", status_code=404, code="not_found")
    if isinstance(exc, UserDataErased):
        return ApplicationError(
            _("Your data was erased while this request ran; nothing of it was saved."),
            status_code=409, code="erased",
        )
    if isinstance(exc, StalePlanError):
        return ApplicationError(str(exc), field="expected_delete_ids", status_code=409, code="stale_plan")
    if isinstance(exc, LLMError):
        return ApplicationError(
            f"The language model failed ({getattr(exc, 'reason', 'error')}).", status_code=502, code="llm_error"
        )
    if isinstance(exc, RequestDataTooBig):
        request = context.get("request") if context else None
        limit = body_limit_for(request.path) if request is not None else settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return ApplicationError(body_too_large_message(limit), status_code=413, code="request_too_large")
    if isinstance(exc, (OperationalError, InterfaceError)):
        return ApplicationError(
            "The database is unavailable; nothing was changed. Try again.", status_code=503, code="unavailable"
        )
    return None


def with_retry_after(response):
    """A 503 (the database busy or unreachable) says when to try again."""
    if response.status_code == status.HTTP_503_SERVICE_UNAVAILABLE:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER: every error, DRF's and ours, in the one shape."""
    if not isinstance(exc, ApplicationError):
        exc = _domain_error(exc, context) or exc
    if isinstance(exc, ApplicationError):
        fields = {exc.field: [exc.message]} if exc.field else {}
        message = f"{exc.field}: {exc.message}" if exc.field else exc.message
        return with_retry_after(Response(error_body(exc.code, message, fields), status=exc.status_code))
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        fields = _flatten(exc.detail)
        first_field, messages = next(iter(fields.items()), ("", ["Invalid input."]))
        message = f"{first_field}: {messages[0]}" if first_field != "non_field_errors" else messages[0]
        body = error_body("invalid", message, fields)
    else:
        detail = getattr(exc, "detail", None)
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        message = str(detail or "") or str(getattr(exc, "default_detail", "") or "") or response.status_text
        body = error_body(str(code), message)
    response.data = body
    return response
