"""The one JSON guard: every JSON body (API, web forms) and every tool argument of a model goes through it.

Python's ``json`` accepts what the rest of the stack cannot store or answer: ``Infinity``, ``NaN`` and
``1e400`` (a float ``inf``: the database's JSON check and ``json.dumps(allow_nan=False)`` refuse it later,
after other writes were made), lone surrogates (``"\\ud800"``: valid JSON, not encodable as UTF-8, so the
database driver fails on it), and nesting a thousand levels deep (``RecursionError`` in the parser or in
whatever walks the value later). Each is refused here with :class:`JSONGuardError` naming the field
(``messages[3].content``), which the API turns into a 400 and the web forms into a form error.

Example:
    >>> parse_json(b'{"params": {"keep_first": 1e400}}')
    Traceback (most recent call last):
    ...
    memoryboard.jsonguard.JSONGuardError: params.keep_first: numbers must be finite (no Infinity, NaN or 1e400).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

try:
    import orjson
except ImportError:  # an optional speed-up (requirements.txt installs it)
    orjson = None

MAX_DEPTH = 64  # deeper than any message format needs (Anthropic blocks in tool results: about 8)

_CONSTANT = object()  # what Infinity / -Infinity / NaN parse to, so the walk can name their field
# Integers of 19 digits or more: orjson reads those beyond 64 bits as floats (Python's json keeps them).
# Found as 19 zeros in the text with every ASCII digit made "0" and every other byte "." (bytes.translate,
# in C): 0.3 ms on a 0.4 MB agent trace and 4 ms on 3.7 MB, where ``re.search(rb"\d{19}")`` took 5 ms and
# 35 ms (load 5, same run): the regex was two thirds of parsing the body.
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x2E for byte in range(256))
_LONG_NUMBER = b"0" * 19
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF][0-9a-fA-F]{2}")
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


class JSONGuardError(ValueError):
    """A JSON text or value the guard refuses; ``field`` names where (``""``: the whole body)."""

    def __init__(self, message: str, *, field: str = "", syntax: json.JSONDecodeError | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.message = message
        self.field = field
        self.syntax = syntax  # the parser's error (line, column) when the text is not JSON at all


def _join(prefix: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    key = str(key).encode("utf-8", "backslashreplace").decode("utf-8")  # a field name must be printable
    return f"{prefix}.{key}" if prefix else key


def parse_json(text_or_bytes: str | bytes | bytearray, *, field_prefix: str = "") -> Any:
    """Parse JSON text and refuse what the guard refuses.

    Args:
        text_or_bytes: the body or the form field's text (bytes are decoded as UTF-8).
        field_prefix: the name of the form field or argument the text came from; paths inside the
            value are appended to it (``params.keep_first``). Empty for a request body.

    Returns:
        The parsed value.

    Raises:
        JSONGuardError: not JSON, nested deeper than :data:`MAX_DEPTH`, a number that is not finite, or a
            lone surrogate; ``field`` names the place.
    """
    fast = _parse_fast(text_or_bytes, field_prefix)
    if fast is not _CONSTANT:
        return fast
    if isinstance(text_or_bytes, (bytes, bytearray)):
        try:
            text = bytes(text_or_bytes).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONGuardError(f"the body is not UTF-8 ({exc.reason} at byte {exc.start}).",
                                 field=field_prefix) from None
    else:
        text = str(text_or_bytes)
    strings = bool(_SURROGATE_ESCAPE.search(text)) or not _encodable(text)
    try:
        value = json.loads(text, parse_constant=lambda _name: _CONSTANT)
    except RecursionError:
        raise JSONGuardError(f"nested deeper than {MAX_DEPTH} levels.",
                             field=_path_at_depth(text, MAX_DEPTH, field_prefix)) from None
    except json.JSONDecodeError as exc:
        raise JSONGuardError(f"invalid JSON: {exc}", field=field_prefix, syntax=exc) from None
    except ValueError as exc:  # e.g. an integer with more than 4300 digits
        raise JSONGuardError(f"invalid JSON: {exc}", field=field_prefix) from None
    _walk(value, field=field_prefix, strings=strings)
    return value


def _parse_fast(text_or_bytes: str | bytes | bytearray, field_prefix: str) -> Any:
    """``orjson``, when it reads the text as Python's ``json`` would: it refuses ``NaN``, ``Infinity``,
    ``1e400``, lone surrogates and text that is not UTF-8, so a value it returns holds no such thing and
    only its depth is left to check. Anything it refuses, and integers of 19 digits or more (which it
    would read as floats), go the slow way, which names the field. ``_CONSTANT`` when it cannot answer."""
    if orjson is None:
        return _CONSTANT
    raw = text_or_bytes if isinstance(text_or_bytes, (bytes, bytearray)) else None
    if raw is None:
        try:
            raw = text_or_bytes.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in the text itself
            return _CONSTANT
    large = len(raw) >= _SCAN_FROM_BYTES
    text = np.frombuffer(raw, dtype=np.uint8) if large else None
    long_integer = _has_long_integer(text) if large else _LONG_NUMBER in raw.translate(_DIGITS_AS_ZEROS)
    if long_integer:
        return _CONSTANT
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _CONSTANT
    # Only the depth is left (orjson allows 1024 levels): counted on the text when it is large.
    if not large:
        _walk(value, field=field_prefix, strings=False)
    elif _nesting_depth(text) > MAX_DEPTH:
        return _CONSTANT  # the slow way names the field
    return value


def _has_long_integer(text: np.ndarray) -> bool:
    """Whether the text holds 19 ASCII digits in a row, from the positions of its digits (sorted: 19 in a
    row end 18 places after they start), block by block (:data:`_BLOCK`, overlapping by 18 bytes): 0.9 ms
    on a 3.7 MB agent trace and 11 ms on 37 MB, where ``bytes.translate`` and a substring search took 3.7
    and ~40 ms (load 5)."""
    span = len(_LONG_NUMBER) - 1
    for start in range(0, len(text), _BLOCK):
        digits = np.flatnonzero((text[start:start + _BLOCK + span] - 0x30) < 10)  # uint8: below "0" wraps
        if len(digits) > span and np.any(digits[span:] - digits[:-span] == span):
            return True
    return False


_SCAN_FROM_BYTES = 16_384  # below, walking the value is cheaper than scanning the text
# The scans go block by block: their temporary arrays stay small (in cache, no fresh pages from the system):
# a 37 MB body's depth in 46 ms instead of 102 ms in one piece, 3.7 MB in 4.4 instead of 5.2 (load 5).
_BLOCK = 1 << 18


def _nesting_depth(text: np.ndarray) -> int:
    """The deepest nesting of ``[``/``{`` outside strings in valid JSON text (``uint8``), with numpy over the
    positions of quotes and brackets, block by block, the depth and whether a string is open carried from
    one block to the next. A quote preceded by an odd run of backslashes is inside a string; the runs are
    measured for all such quotes of a block at once (one step per backslash of the longest run, looking
    back across blocks). Walking the parsed value instead cost 5x the parse on a 4 MB body.

    Quotes and brackets are found in one pass over the block (one ``flatnonzero``), and a bracket is outside
    every string when the quotes before it (the block's, plus one if a string is open) are even: 0.44 ms on
    a 0.37 MB agent trace where finding quotes and brackets apart and placing each bracket among the quotes
    (``searchsorted``) took 0.52 ms, 4.5 ms instead of 5.3 on 3.7 MB (CPU time, load 4).
    """
    depth = deepest = 0
    open_string = 0  # 1 while a string that began in an earlier block is open
    for start in range(0, len(text), _BLOCK):
        block = text[start:start + _BLOCK]
        folded = block | 0x20  # "[" 0x5B and "{" 0x7B fold to 0x7B, "]" 0x5D and "}" 0x7D to 0x7D; '"' stays 0x22
        marks = np.flatnonzero((block == 0x22) | (folded == 0x7B) | (folded == 0x7D))
        if not len(marks):
            continue
        kinds = folded[marks]
        quote = kinds == 0x22
        quotes = np.flatnonzero(quote)
        if len(quotes):
            at = marks[quotes] + start  # (a quote at offset 0 looks at the last byte: never a backslash in JSON)
            after_backslash = np.flatnonzero(text[at - 1] == 0x5C)
            if len(after_backslash):
                odd = np.ones(len(after_backslash), dtype=bool)
                before = at[after_backslash] - 2
                more = (before >= 0) & (text[np.maximum(before, 0)] == 0x5C)
                while more.any():
                    odd ^= more
                    before -= 1
                    more &= (before >= 0) & (text[np.maximum(before, 0)] == 0x5C)
                escaped = quotes[after_backslash[odd]]
                quote[escaped] = False
                kinds[escaped] = 0  # neither a quote nor a bracket
        seen = np.cumsum(quote, dtype=np.int32)  # the string-ending quotes up to each mark (a bracket is none)
        brackets = kinds[(kinds > 0x22) & (((seen + open_string) & 1) == 0)]
        if len(brackets):
            levels = np.cumsum(np.where(brackets == 0x7B, 1, -1).astype(np.int32)) + depth
            deepest = max(deepest, int(levels.max()))
            depth = int(levels[-1])
        open_string = (open_string + int(seen[-1])) & 1
    return deepest


def check_json_value(value: Any, *, field: str) -> None:
    """Check a value that was parsed elsewhere (a model's tool arguments, a client library's output).

    Raises:
        JSONGuardError: nested deeper than :data:`MAX_DEPTH`, a float that is not finite, a string
            with a lone surrogate, or a value JSON cannot hold; ``field`` names the place.
    """
    _walk(value, field=field, strings=True)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_string(text: str, field: str) -> None:
    if not _encodable(text):
        raise JSONGuardError("contains a lone surrogate (\\ud800-\\udfff), which is not text.", field=field)


_FINITE_MESSAGE = "numbers must be finite (no Infinity, NaN or 1e400)."
_SCALARS = (str, int, bool, type(None))


def _check_scalar(item: Any, path: str, strings: bool) -> None:
    if isinstance(item, float):
        if not math.isfinite(item):
            raise JSONGuardError(_FINITE_MESSAGE, field=path)
    elif isinstance(item, str):
        if strings:
            _check_string(item, path)
    elif item is _CONSTANT:
        raise JSONGuardError(_FINITE_MESSAGE, field=path)
    elif not isinstance(item, _SCALARS):
        raise JSONGuardError(f"{type(item).__name__} is not a JSON value.", field=path)


def _walk(value: Any, *, field: str, strings: bool) -> None:
    """One iterative pass (no recursion to exhaust): depth, finite numbers, surrogates (when ``strings``).

    Paths are built only for containers and on error: the pass costs about 3x ``json.loads`` itself.
    """
    if not isinstance(value, (dict, list, tuple)):
        _check_scalar(value, field, strings)
        return
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise JSONGuardError(f"nested deeper than {MAX_DEPTH} levels.", field=path)
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in pairs:
            if strings and type(key) is str:
                _check_string(key, _join(path, key))
            kind = type(child)
            if kind is dict or kind is list or kind is tuple:
                stack.append((child, _join(path, key), depth + 1))
            elif kind is int or kind is bool or child is None or (kind is str and not strings):
                continue
            else:
                _check_scalar(child, _join(path, key), strings)


def _path_at_depth(text: str, limit: int, prefix: str) -> str:
    """The path of the first container nested deeper than ``limit`` (only called on the error path)."""
    path: list[str | int] = []
    pending_key: str | None = None
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            if len(path) >= limit:
                break
            path.append(0 if token == "[" else "")
            pending_key = None
        elif token in "]}":
            if path:
                path.pop()
        elif token == ",":
            if path and isinstance(path[-1], int):
                path[-1] += 1
        elif token == ":":
            if path and isinstance(path[-1], str) and pending_key is not None:
                path[-1] = pending_key
        elif path and isinstance(path[-1], str):
            pending_key = json.loads(token)
    name = prefix
    for key in path:  # the location of the container that opens one level too deep
        name = _join(name, key)
    return name
