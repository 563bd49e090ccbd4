"""The peers of the context API in ``benchmarks/context_api.py``, as WSGI apps served like memoryboard:
``gunicorn -c gunicorn.conf.py benchmarks.peers_wsgi:langchain_app`` (or ``:floor_app``).

* ``langchain_app``: LangChain's ``trim_messages`` at its best idiomatic form on the API's request body:
  ``json.loads`` → ``convert_to_messages`` → ``trim_messages(strategy="last", start_on="human",
  include_system=True)`` with the project's estimate as a **cached** token counter (each message counted
  once per request, tool-call arguments serialised once, not on every pass of its binary search) →
  ``convert_to_openai_messages`` → ``json.dumps``; the garbage collector paused for the request, as the
  API's view pauses it.
* ``floor_app``: what any server of this body must do: parse it (``orjson``) and write it back.

Both read ``{"messages": [...], "params": {"max_tokens": N}}`` and answer ``{"messages": [...]}``.
The module sets Django up only because ``gunicorn.conf.py``'s hooks use it (the forked workers close the
database connections and start the background work, as memoryboard's do); no request touches Django.
"""

from __future__ import annotations

import gc
import json
import os

import django
import orjson
from langchain_core.messages import convert_to_messages, convert_to_openai_messages, trim_messages

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")
django.setup()


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")


class CachedTokenCounter:
    """The project's estimate (text, tool-call names and arguments, / 2.5 + 4 per message), each message
    measured once: ``trim_messages`` calls the counter on many slices of the same messages. The cache holds
    the message itself, so its ``id`` cannot be reused within the request."""

    def __init__(self) -> None:
        self.sizes: dict[int, tuple[object, float]] = {}

    def __call__(self, messages) -> float:
        total = 0.0
        sizes = self.sizes
        for m in messages:
            known = sizes.get(id(m))
            if known is None:
                chars = len(_text(m.content))
                for call in getattr(m, "tool_calls", ()) or ():
                    chars += len(call["name"]) + len(json.dumps(call["args"], ensure_ascii=False, separators=(",", ":")))
                known = sizes[id(m)] = (m, chars / 2.5 + 4)
            total += known[1]
        return total


def trim_body(body: bytes) -> bytes:
    data = json.loads(body)
    messages = convert_to_messages(data["messages"])
    kept = trim_messages(messages, max_tokens=data["params"]["max_tokens"], token_counter=CachedTokenCounter(),
                         strategy="last", start_on="human", include_system=True)
    return json.dumps({"messages": convert_to_openai_messages(kept)}, ensure_ascii=False).encode()


def floor_body(body: bytes) -> bytes:
    return orjson.dumps(orjson.loads(body))


def _app(work):
    def app(environ, start_response):
        if environ["REQUEST_METHOD"] != "POST":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            out = work(body)
        except Exception as exc:  # noqa: BLE001 - a benchmark peer: say what failed
            start_response("400 Bad Request", [("Content-Type", "text/plain")])
            return [repr(exc).encode()]
        finally:
            if was_enabled:
                gc.enable()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(out)))])
        return [out]

    return app


langchain_app = _app(trim_body)
floor_app = _app(floor_body)
