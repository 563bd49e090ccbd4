"""A JSON renderer through ``orjson`` for the large bodies: context strategy results and ``/v1`` answers.

DRF's ``JSONRenderer`` (Python's ``json`` with its encoder) took a third of the context API's time on a
10,000-message trace (benchmarks/README.md § Strategies on agent traffic). Same bytes for the values these
views answer (dicts, lists, strings, numbers; lazy translations as their text), compact, UTF-8 unescaped;
a value ``orjson`` cannot write goes through DRF's renderer as before.
"""

from __future__ import annotations

import orjson
from django.utils.functional import Promise
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer


def _default(value):
    if isinstance(value, Promise):  # gettext_lazy in error messages
        return str(value)
    raise TypeError


class FastJSONRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if self.get_indent(accepted_media_type, renderer_context or {}) is None:
            try:
                return orjson.dumps(data, default=_default)
            except TypeError:
                pass
        return super().render(data, accepted_media_type, renderer_context)


# For views answering large JSON bodies: the fast renderer first, the browsable API as before.
FAST_JSON_RENDERERS = [FastJSONRenderer, BrowsableAPIRenderer]
