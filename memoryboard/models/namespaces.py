"""Namespaces of long-term memory: ``["agent:{namespace}", "user:{userId}", "memories"]``.

A namespace is always built here, on the server side, from the authenticated caller and
the agent's configuration; never from an LLM tool argument or a request body.

A stored namespace is JSON text and its spelling depends on the writer: Jackson writes it compact
(``["agent:chat","user:42","memories"]``), Python's ``json.dumps`` and the seed print it spaced
(``["agent:chat", "user:42", "memories"]``), and writers that escape non-ASCII characters spell
``中`` as ``\\u4e2d`` (Python, PHP) or ``\\u4E2D`` (Jackson's ``ESCAPE_NON_ASCII``); PHP also escapes
``/`` as ``\\/``. :func:`namespace_spellings` lists every one of these spellings of one namespace (a
finite set, at most a dozen), so a reader can look them up with an indexed ``IN``;
:func:`namespace_belongs_to` is the one exact ownership test (it parses the text). memoryboard itself
writes one spelling, :func:`canonical_text` (``MEMORYBOARD_NAMESPACE_SPELLING``, default compact).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

MEMORIES = "memories"

# MEMORYBOARD_NAMESPACE_SPELLING: the spelling memoryboard writes.
SPELLINGS = {
    "compact": (",", False),  # ["agent:chat","user:42","memories"] (Jackson's default)
    "spaced": (", ", False),  # ["agent:chat", "user:42", "memories"] (Python's json.dumps)
    "compact-ascii": (",", True),  # non-ASCII as \uXXXX escapes
    "spaced-ascii": (", ", True),
}
DEFAULT_SPELLING = "compact"

# A \u escape (preceded by an even number of backslashes, so an escaped backslash is not one).
_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u([0-9a-f]{4})")
_SLASH = re.compile(r"(?<!\\)((?:\\\\)*)/")


def _spell(parts: list[str], *, separator: str, ascii_only: bool) -> str:
    return json.dumps(parts, ensure_ascii=ascii_only, separators=(separator, ":"))


def _upper_hex(text: str) -> str:
    return _ESCAPE.sub(lambda m: m.group(1) + "\\u" + m.group(2).upper(), text)


def _escaped_slashes(text: str) -> str:
    return _SLASH.sub(lambda m: m.group(1) + "\\/", text)


def spell_json_array(parts: list[str]) -> list[str]:
    """Every spelling real writers give the JSON array ``parts``, the compact one first (deduplicated)."""
    found: dict[str, None] = {}
    for separator in (",", ", "):
        raw = _spell(parts, separator=separator, ascii_only=False)
        lower = _spell(parts, separator=separator, ascii_only=True)
        for text in (raw, lower, _upper_hex(lower)):
            found.setdefault(text)
            if "/" in text:
                found.setdefault(_escaped_slashes(text))
    return list(found)


def configured_spelling() -> str:
    return getattr(settings, "MEMORYBOARD_NAMESPACE_SPELLING", DEFAULT_SPELLING)


@dataclass(frozen=True, slots=True)
class Namespace:
    agent: str
    user_id: str

    def as_list(self) -> list[str]:
        return [f"agent:{self.agent}", f"user:{self.user_id}", MEMORIES]

    def as_text(self) -> str:
        """The spelling memoryboard writes (``MEMORYBOARD_NAMESPACE_SPELLING``, default compact)."""
        return canonical_text(self)

    def key(self) -> str:
        """A fixed spelling (compact, raw) for lock names and derived ids: independent of the setting."""
        return _spell(self.as_list(), separator=",", ascii_only=False)

    def spellings(self) -> list[str]:
        return namespace_spellings(self)

    def __str__(self) -> str:
        return self.as_text()


def canonical_text(namespace: Namespace) -> str:
    """The one spelling memoryboard writes a namespace in."""
    separator, ascii_only = SPELLINGS.get(configured_spelling(), SPELLINGS[DEFAULT_SPELLING])
    return _spell(namespace.as_list(), separator=separator, ascii_only=ascii_only)


@lru_cache(maxsize=4096)
def _spellings(agent: str, user_id: str) -> tuple[str, ...]:
    return tuple(spell_json_array([f"agent:{agent}", f"user:{user_id}", MEMORIES]))


def namespace_spellings(namespace: Namespace) -> list[str]:
    """Every spelling real writers give this namespace (2 for ASCII text, up to 12 otherwise).

    Each of them parses back to ``namespace`` (tested), so an exact (binary) ``IN`` over this list
    finds the namespace's items whatever wrote them, and only those.
    """
    return list(_spellings(namespace.agent, namespace.user_id))


def build_namespace(*, agent_namespace: str, user_id: str) -> Namespace:
    if not agent_namespace or not user_id:
        raise ValueError("agent namespace and user id are required")
    return Namespace(agent=str(agent_namespace), user_id=str(user_id))


def parse_namespace(text: str | list) -> Namespace | None:
    """Parse the stored namespace; None when it is not of the memories shape."""
    if isinstance(text, str):
        return _parse_namespace_text(text)
    return _parse_namespace(text)


@lru_cache(maxsize=4096)
def _parse_namespace_text(text: str) -> Namespace | None:
    """Namespaces repeat (one per user and agent): each text is parsed once."""
    return _parse_namespace(text)


def _parse_namespace(text: str | list) -> Namespace | None:
    try:
        parts = json.loads(text) if isinstance(text, str) else list(text)
    except (TypeError, ValueError):
        return None
    if not (isinstance(parts, list) and len(parts) == 3 and parts[2] == MEMORIES):
        return None
    agent, user = parts[0], parts[1]
    if not (isinstance(agent, str) and agent.startswith("agent:")):
        return None
    if not (isinstance(user, str) and user.startswith("user:")):
        return None
    return Namespace(agent=agent[len("agent:"):], user_id=user[len("user:"):])


def namespace_belongs_to(text: str, *, user_id: str, agent: str | None = None) -> bool:
    """The one ownership test: whether stored namespace ``text`` is user ``user_id``'s (under ``agent``,
    or under any agent), whatever its JSON spelling. Exact: the text is parsed, not pattern-matched."""
    ns = parse_namespace(text)
    return ns is not None and ns.user_id == str(user_id) and (agent is None or ns.agent == str(agent))


def agent_prefixes(agent_namespace: str) -> list[str]:
    """The start of every stored namespace of one agent, in each spelling writers give the agent
    element (raw, ``\\uxxxx``, ``\\uXXXX``, ``\\/``); compact and spaced share these, as both continue
    with ``,``. An indexed prefix match."""
    return [text[:-1] + "," for text in spell_json_array([f"agent:{agent_namespace}"])]


def first_element_end(text: str) -> int | None:
    """The index just past the first element of a JSON array text (``["agent:x"`` of a namespace), or
    None when the text does not start with an array of a string. Lets a loose index scan step past
    every namespace that shares this agent element's spelling."""
    index = 1 if text.startswith("[") else -1
    if index < 0:
        return None
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    if index >= len(text) or text[index] != '"':
        return None
    try:
        _value, end = json.decoder.scanstring(text, index + 1)
    except ValueError:
        return None
    return end
