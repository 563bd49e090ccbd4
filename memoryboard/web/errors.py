"""Error pages (400, 403, 404, 405, 500) in the site's look and language, with a way back.

The URLconf's ``handler400/403/404/500`` point here. Under ``/api/`` and ``/v1/`` the answer is the API's
JSON error shape instead of a page. With ``DEBUG`` on (the demo), Django would show its technical 404
and 500 pages; :class:`ErrorPagesMiddleware` shows these pages there too, unless
``MEMORYBOARD_TECHNICAL_ERROR_PAGES`` is set (a developer who wants Django's pages back).
"""

from __future__ import annotations

import logging
import re
import sys
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import BadRequest, DisallowedHost, PermissionDenied, SuspiciousOperation
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse, JsonResponse
from django.template import loader
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

from memoryboard.shared.errors import API_PREFIXES, RETRY_AFTER_SECONDS, error_body

logger = logging.getLogger("django.request")


def database_unavailable(exc: BaseException | None) -> bool:
    """The database failed or stayed locked (SQLite's "database is locked" after its busy timeout)."""
    return isinstance(exc, (OperationalError, InterfaceError))


def _texts() -> dict[int, tuple[str, str, str]]:
    return {
        400: ("bad_request", _("Bad request"), _("The request could not be understood. Check the address or the form and try again.")),
        403: ("forbidden", _("Not allowed"), _("You do not have permission to see this page. Sign in with another account or ask an administrator for access.")),
        405: ("method_not_allowed", _("Not a page"), _("This address takes a form sent from a button on its page, not a visit. Go back and use the button.")),
        404: ("not_found", _("Page not found"), _("There is nothing at this address. The link may be broken or the item may have been removed.")),
        500: ("server_error", _("Something went wrong"), _("The server could not complete the request. Nothing was changed by the failed request; try again in a moment.")),
        503: ("unavailable", _("Busy, try again"), _("The database is busy or unreachable. Nothing was changed by the failed request; try again in a few seconds.")),
    }


def _back_url(request) -> str | None:
    """The page the user came from, when it is on this site (never back to the failing page)."""
    referer = request.META.get("HTTP_REFERER", "")
    if not referer:
        return None
    try:
        host = request.get_host()
    except DisallowedHost:  # the page answering a bad Host header
        return None
    if not url_has_allowed_host_and_scheme(referer, allowed_hosts={host}, require_https=request.is_secure()):
        return None
    if urlsplit(referer).path == request.path:
        return None
    return referer


def error_response(request, status: int, *, message: str | None = None) -> HttpResponse:
    code, title, default_message = _texts()[status]
    message = message or default_message
    if request.path.startswith(API_PREFIXES):
        return JsonResponse(error_body(code, str(title)), status=status)
    context = {"status": status, "title": title, "message": message, "back_url": _back_url(request)}
    try:
        body = loader.render_to_string("errors/error.html", context, request=request)
    except Exception:  # the page itself failed (e.g. the database is down): the plain page, no context
        logger.exception("error page %s failed to render", status)
        body = loader.render_to_string("500.html", context)
    response = HttpResponse(body, status=status)
    response.mb_error_page = True
    return response


def bad_request(request, exception=None):
    return error_response(request, 400)


def permission_denied(request, exception=None):
    return error_response(request, 403)


def csrf_failure(request, reason=""):
    """A form posted without a valid CSRF token (an old tab, cookies off): say what to do."""
    return error_response(request, 403, message=_(
        "The form expired or your browser did not send its security cookie. Reload the page and send it again."))


class NotFoundSaying(Http404):
    """A 404 whose message (translated, written for the reader) the page shows: why it is not there."""


def page_not_found(request, exception=None):
    if isinstance(exception, NotFoundSaying) and exception.args:
        return error_response(request, 404, message=str(exception.args[0]))
    return error_response(request, 404)


def server_error(request):
    """The 500 page; a 503 with ``Retry-After`` when the failure was the database (busy or unreachable):
    the request can simply be repeated."""
    if database_unavailable(sys.exc_info()[1]):
        response = error_response(request, 503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    return error_response(request, 500)


class ErrorPagesMiddleware:
    """With DEBUG on, the site's 404 and 500 pages instead of Django's technical ones.

    A 404 that no view answered (no URL matched) reaches this middleware as Django's technical page: any
    HTML 404 that is not one of ours is replaced. A bad request a view raised gets the 400 page; any other
    exception is logged and answered with the 500 page. Off when DEBUG is off (the URLconf's handlers already answer) or when
    ``MEMORYBOARD_TECHNICAL_ERROR_PAGES`` is on.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    @property
    def active(self) -> bool:
        return settings.DEBUG and not getattr(settings, "MEMORYBOARD_TECHNICAL_ERROR_PAGES", False)

    def __call__(self, request):
        response = self.get_response(request)
        if (response.status_code == 405 and not getattr(response, "mb_error_page", False)
                and not request.path.startswith(API_PREFIXES) and not response.content):
            # Django's require_POST answers a visit with an empty 405: the site's page instead, in any mode.
            page = error_response(request, 405)
            if response.has_header("Allow"):
                page["Allow"] = response["Allow"]
            return page
        if (self.active and response.status_code == 404 and not getattr(response, "mb_error_page", False)
                and response.get("Content-Type", "").startswith("text/html")
                and not request.path.startswith(API_PREFIXES)):
            return page_not_found(request)
        return response

    def process_exception(self, request, exception):
        if self.active and isinstance(exception, NotFoundSaying):
            return page_not_found(request, exception)
        if not self.active or isinstance(exception, (Http404, PermissionDenied)):
            return None  # Django answers these with the URLconf's handlers (the 404 is replaced above)
        if isinstance(exception, (BadRequest, SuspiciousOperation)):
            logger.warning("Bad Request: %s", request.path, extra={"status_code": 400, "request": request})
            return bad_request(request)
        logger.error("Internal Server Error: %s", request.path, exc_info=exception,
                     extra={"status_code": 500, "request": request})
        return server_error(request)


class SecretsHiddenFilter(SafeExceptionReporterFilter):
    """Django's filter, also masking names with DATABASE, URL or DSN (``DATABASE_URL`` may carry a password,
    ``OPENAI_BASE_URL`` a token) in the settings and in the request's variables (under runserver these
    include the environment)."""

    hidden_settings = re.compile("API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|DATABASE|URL|DSN", flags=re.I)


class SiteExceptionReporter(ExceptionReporter):
    """With DEBUG on, Django answers an error raised outside the views (a bad ``Host`` header, a failing
    middleware) with its technical page, which prints settings and the environment: the site's 400 or 500
    page instead, unless ``MEMORYBOARD_TECHNICAL_ERROR_PAGES`` is on. Reports with DEBUG off (e-mails,
    logs) keep the traceback."""

    def _site_page(self) -> bool:
        return settings.DEBUG and not getattr(settings, "MEMORYBOARD_TECHNICAL_ERROR_PAGES", False)

    def _status(self) -> int:
        return 400 if isinstance(self.exc_value, (BadRequest, SuspiciousOperation)) else 500

    def get_traceback_html(self):
        if not self._site_page():
            return super().get_traceback_html()
        if self.request is None:
            return loader.render_to_string("500.html", {})
        return error_response(self.request, self._status()).content.decode()

    def get_traceback_text(self):
        if not self._site_page():
            return super().get_traceback_text()
        return str(_texts()[self._status()][1])
