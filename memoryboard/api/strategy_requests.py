"""What the strategy endpoints share: the caller's strategy slot, the paused cycle collector, and the
direct path of ``POST /api/v1/strategies/context/<name>/apply``.

The direct path serves the common request (a JSON body signed with ``Authorization: Token …``) without
DRF's request wrapper, content negotiation and response rendering, with the same pieces: the token
authentication class, the body limit, the JSON parser and its guard, the user's strategy slot (429), the
one exception handler and the fast renderer; the middleware runs as for every request. Anything else
(another method, a session or no credentials, a failed token, another content type or ``Accept``, an
empty body) goes to the DRF view unchanged, which answers it as it always did (docs/decisions.md).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import BytesIO

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from rest_framework.exceptions import AuthenticationFailed, Throttled

from memoryboard import conversations
from memoryboard.api import serializers as s
from memoryboard.api.exceptions import exception_handler
from memoryboard.api.middleware import read_body_within
from memoryboard.api.parsers import GuardedJSONParser
from memoryboard.api.renderers import FastJSONRenderer
from memoryboard.api.throttling import StrategyBusy, strategy_request_slot
from memoryboard.shared.authentication import TokenAuthentication
from memoryboard.shared.errors import body_limit_for

JSON_TYPES = frozenset({"application/json", "application/json; charset=utf-8", "application/json;charset=utf-8"})
# What DRF's content negotiation answers with the fast renderer (no indent, no browsable page).
PLAIN_ACCEPTS = frozenset({"", "*/*", "application/json"})
TOKEN_PREFIX = f"{TokenAuthentication.keyword} "


@contextmanager
def strategy_slot(request, user=None) -> Iterator[None]:
    """One of the caller's strategy slots for this request (before its body is read), else a 429."""
    try:
        length = max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        length = 0
    user = user if user is not None else request.user
    try:
        with strategy_request_slot(user_key=str(user.pk), body_bytes=length):
            yield
    except StrategyBusy as exc:
        if exc.reason == "bytes":
            message = _("Your strategy requests running now already carry %(limit)d bytes; wait for them to finish.") % {
                "limit": settings.MEMORYBOARD_STRATEGY_BYTES_PER_USER}
        else:
            message = _("You already run %(n)d strategy requests at once; wait for one to finish.") % {
                "n": settings.MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER}
        raise Throttled(wait=1, detail=message) from exc


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while the block runs (then back as it was).

    For the strategy bodies: parsing a trace and reading its messages makes one object per JSON value and
    no cycle, yet every 700 new objects trigger a collection, and the older generations are walked again
    and again as the parsed body grows. Measured (CPU time, load 6-8, alternated): on 100,000 messages a
    request took 510 ms instead of 908 ms at 4,000 tokens and 764 ms instead of 1,137 ms at half of the
    input. Process-wide: another thread's collections wait for the end of the block too (the objects stay
    counted, the next collection finds any cycle). A block that drops the parsed body before it ends leaves
    the collector nothing to walk when it resumes (the direct path below does).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _direct(request: HttpRequest) -> bool:
    meta = request.META
    return (request.method == "POST" and meta.get("HTTP_AUTHORIZATION", "").startswith(TOKEN_PREFIX)
            and meta.get("CONTENT_TYPE", "").lower() in JSON_TYPES and meta.get("HTTP_ACCEPT", "") in PLAIN_ACCEPTS
            and meta.get("CONTENT_LENGTH", "0") not in ("", "0"))


def _json_response(data, status: int, headers) -> HttpResponse:
    return _content_response(FastJSONRenderer().render(data, "application/json", {}), status, headers)


def _content_response(content: bytes, status: int, headers) -> HttpResponse:
    response = HttpResponse(content, status=status, content_type="application/json")
    for key, value in headers:
        response[key] = value
    return response


def context_apply_view(drf_view: Callable) -> Callable:
    """The URL's view of the context endpoint: the direct path, or ``drf_view`` (``ContextApplyView``) for
    every request the direct path does not take. Keeps ``drf_view``'s attributes (the schema reads them)."""
    view_headers = list(drf_view.cls(**drf_view.initkwargs).default_response_headers.items())

    def view(request: HttpRequest, name: str):
        if not _direct(request):
            return drf_view(request, name=name)
        try:
            authenticated = TokenAuthentication().authenticate(request)
        except AuthenticationFailed:
            authenticated = None
        if authenticated is None:
            return drf_view(request, name=name)  # its 401, with WWW-Authenticate, as always
        request.user = authenticated[0]
        try:
            with strategy_slot(request, request.user):
                read_body_within(request, body_limit_for(request.path))
                with collector_paused():
                    data = GuardedJSONParser().parse(BytesIO(request._body), "application/json", {})
                    values = s.context_apply_input(data)
                    answer = conversations.context_apply(
                        name, values["messages"], values["params"],
                        format=values["format"], system=values["system"], keep_system=values["keep_system"],
                    ).to_dict()
                    content = FastJSONRenderer().render(answer, "application/json", {})
                    # Freed before the collector resumes: the body, and the result's messages, which would
                    # otherwise trigger a collection as it resumes (0.13 ms of a 1,000-message request
                    # keeping half of them).
                    del data, values, answer
            return _content_response(content, 200, view_headers)
        except Exception as exc:  # noqa: BLE001 - every error through the API's one handler, as DRF would
            response = exception_handler(exc, {"request": request, "view": None})
            if response is None:
                raise
            headers = [(key, value) for key, value in response.items() if key.lower() != "content-type"]
            return _json_response(response.data, response.status_code, [*view_headers, *headers])

    view.__dict__.update(drf_view.__dict__)  # cls, initkwargs, csrf_exempt: the schema and Django read them
    view.__name__, view.__doc__ = drf_view.__name__, drf_view.__doc__
    return view
