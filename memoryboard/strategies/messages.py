"""The one message type of the strategy package and the one converter into it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from .errors import StrategyInputError

__all__ = ["Role", "Message", "ToolCall", "FrozenMapping", "thaw"]


class Role(StrEnum):
    """Role of a chat message; the values match the ``chat_message.role`` column."""

    SYSTEM = "SYSTEM"
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    TOOL = "TOOL"

    @classmethod
    def parse(cls, value: object, *, field: str = "role") -> Role:
        """Parse a role in any case (``"user"``, ``"USER"``, ``Role.USER``).

        Args:
            value: The role to parse.
            field: The field name reported in the error.

        Returns:
            The matching :class:`Role`.

        Raises:
            StrategyInputError: If ``value`` is not a string naming a known role.

        Example:
            >>> Role.parse("assistant")
            <Role.ASSISTANT: 'ASSISTANT'>
        """
        if isinstance(value, Role):
            return value
        role = _ROLE_BY_NAME.get(value) if isinstance(value, str) else None
        if role is not None:
            return role
        if isinstance(value, str):
            try:
                return cls(value.strip().upper())
            except ValueError:
                pass
        allowed = ", ".join(r.value.lower() for r in cls)
        raise StrategyInputError(field, f"unknown role {value!r} (expected one of {allowed})")


_ROLE_BY_NAME: dict[str, Role] = {
    spelling: role for role in Role for spelling in (role.value, role.value.lower(), role.value.capitalize())
}


class FrozenMapping(dict):
    """A read-only dict, so that a frozen :class:`Message` cannot be changed through its metadata.

    A ``dict`` subclass (unlike ``types.MappingProxyType``) so that ``json.dumps`` and Django's ``JSONField``
    accept it as is, and it survives ``copy.deepcopy`` and ``pickle``. Nested dicts and lists are frozen
    too (lists become tuples, which JSON writes as arrays).
    """

    __slots__ = ()

    def __init__(self, data: Mapping[str, Any] = ()) -> None:
        super().__init__((str(k), _freeze(v)) for k, v in dict(data).items())

    def _read_only(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("message metadata is read-only; build a new Message instead")

    __setitem__ = __delitem__ = __ior__ = _read_only  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrozenMapping({dict.__repr__(self)})"

    def __reduce__(self):
        return (FrozenMapping, (dict(self),))

    def __copy__(self) -> FrozenMapping:
        return self

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))


def _freeze(value: Any) -> Any:
    if isinstance(value, FrozenMapping):
        return value
    if isinstance(value, Mapping):
        return FrozenMapping(value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Turn frozen metadata back into plain JSON-friendly ``dict`` / ``list`` values."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [thaw(v) for v in value]
    if isinstance(value, frozenset):
        return [thaw(v) for v in sorted(value, key=repr)]
    return value


class ToolCall(NamedTuple):
    """One tool call of an assistant message: its id, the tool's name and the arguments as JSON text.

    A named tuple, not a frozen dataclass: built for every call of a 100k-message trace, it costs a
    quarter as much."""

    id: str
    name: str
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message.

    Attributes:
        role: The message role.
        content: The text (the text parts joined, for content given as parts or blocks).
        id: The stored row id (``chat_message.id``), ``None`` for messages that are not stored.
        metadata: Read-only metadata (tool calls, the summary marker, ...), or ``None``.
        tool_calls: The tool calls this (assistant) message makes, parallel calls included.
        result_ids: The ids of the tool calls this message answers (an OpenAI ``tool`` message answers
            one; an Anthropic user turn may carry several ``tool_result`` blocks).
        extra: What the non-text content costs, in characters of the token estimate (tool calls by
            name and arguments, images and other blocks by a fixed cost; see :mod:`.tokens`).
        raw: The object the message was read from (an OpenAI or Anthropic dict, a row), returned as is
            when the message is kept; never compared.
    """

    role: Role
    content: str
    id: int | None = None
    metadata: Mapping[str, Any] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    result_ids: tuple[str, ...] = ()
    extra: int = 0
    raw: Any = field(default=None, compare=False, repr=False)
    size: int = field(init=False, compare=False, repr=False)
    """Length in characters for the token estimate: the text plus :attr:`extra` (computed once, here: the
    strategies read it for every message of every call)."""

    def __post_init__(self) -> None:
        if type(self.role) is not Role:
            object.__setattr__(self, "role", Role.parse(self.role))
        if not isinstance(self.content, str):
            raise StrategyInputError("content", f"must be a string, got {type(self.content).__name__}")
        object.__setattr__(self, "size", len(self.content) + self.extra)
        if self.metadata is not None and type(self.metadata) is not FrozenMapping:
            if not isinstance(self.metadata, Mapping):
                raise StrategyInputError("metadata", f"must be an object, got {type(self.metadata).__name__}")
            object.__setattr__(self, "metadata", FrozenMapping(self.metadata))

    @property
    def is_summary(self) -> bool:
        """Whether this message is a summary produced by a strategy."""
        return bool(self.metadata and self.metadata.get("summary"))

    def to_dict(self, *, include_id: bool = False) -> dict[str, Any]:
        """The JSON shape: ``{"role": "user", "content": ...}`` plus ``metadata`` when set."""
        data: dict[str, Any] = {"role": self.role.value.lower(), "content": self.content}
        if include_id:
            data["id"] = self.id
        if self.metadata is not None:
            data["metadata"] = thaw(self.metadata)
        return data


_new = object.__new__
_SETTERS = tuple(
    Message.__dict__[name].__set__
    for name in ("role", "content", "id", "metadata", "tool_calls", "result_ids", "extra", "raw", "size")
)


def checked_message(
    role: Role, content: str, tool_calls: tuple = (), result_ids: tuple = (), extra: int = 0, raw: Any = None
) -> Message:
    """A :class:`Message` from values a reader has already checked (no metadata), without ``__init__``.

    The readers' fast path: the frozen dataclass's ``__init__`` and ``__post_init__`` cost 2.1 µs a message,
    this 1.0 µs (measured on the shared 2-CPU machine; ``benchmarks/agent_traffic.py`` reads 10k-100k).
    """
    m = _new(Message)
    s0, s1, s2, s3, s4, s5, s6, s7, s8 = _SETTERS
    s0(m, role)
    s1(m, content)
    s2(m, None)
    s3(m, None)
    s4(m, tool_calls)
    s5(m, result_ids)
    s6(m, extra)
    s7(m, raw)
    s8(m, len(content) + extra)
    return m
