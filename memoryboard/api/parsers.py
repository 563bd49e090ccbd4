"""The API's JSON parser: DRF's, through the one JSON guard (``memoryboard.jsonguard``)."""

from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework.parsers import JSONParser

from memoryboard.api.exceptions import ApplicationError
from memoryboard.jsonguard import JSONGuardError, parse_json

BODY_FIELD = "body"  # the field named when the whole body is at fault


class GuardedJSONParser(JSONParser):
    """Parses JSON bodies with :func:`memoryboard.jsonguard.parse_json`: nesting depth, numbers that are not
    finite (``Infinity``, ``NaN``, ``1e400``) and lone surrogates are a 400 naming the field, never a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        raw = stream.read() if stream is not None else b""
        try:
            utf8 = codecs.lookup(encoding).name == "utf-8"
        except LookupError:
            utf8 = False
        if utf8:
            # The bytes as they came: the guard's parser reads UTF-8 itself (and names the byte that is
            # not). Decoding here and encoding again inside the guard made parsing a 0.4 MB agent trace 4.4 ms
            # instead of 3.1 ms, 3.7 MB 83 ms instead of 63 ms (garbage collector on, load 3.4, same run).
            text = raw
        else:
            try:
                text = raw.decode(encoding)
            except (UnicodeDecodeError, LookupError) as exc:
                raise ApplicationError(f"the body is not valid {encoding} text ({exc}).", field=BODY_FIELD,
                                       code="parse_error") from None
        try:
            return parse_json(text)
        except JSONGuardError as exc:
            raise ApplicationError(exc.message, field=exc.field or BODY_FIELD, code="parse_error") from None
