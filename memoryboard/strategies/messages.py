"""The one message type of the strategy package and the one converter into it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .errors import StrategyInputError

__all__ = ["Role", "Message", "FrozenMapping", "to_message", "to_messages", "thaw"]


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


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message.

    Attributes:
        role: The message role.
        content: The text.
        id: The stored row id (``chat_message.id``), ``None`` for messages that are not stored.
        metadata: Read-only metadata (tool calls, the summary marker, ...), or ``None``.
    """

    role: Role
    content: str
    id: int | None = None
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if type(self.role) is not Role:
            object.__setattr__(self, "role", Role.parse(self.role))
        if not isinstance(self.content, str):
            raise StrategyInputError("content", f"must be a string, got {type(self.content).__name__}")
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


_MISSING = object()


def to_message(obj: object, index: int | None = None) -> Message:
    """Convert one accepted input shape into a :class:`Message`.

    Accepted: a :class:`Message` (returned as is), a mapping from JSON
    (``{"role": "user", "content": "...", "id": 1, "metadata": {...}}``, ``id`` and ``metadata`` optional),
    or any object with ``role`` / ``content`` / optional ``id`` / ``metadata`` attributes (e.g. a Django row).

    Args:
        obj: The object to convert.
        index: Position in the input list, used to name the field in errors (``messages[3].role``).

    Returns:
        The message.

    Raises:
        StrategyInputError: If role or content is missing or has the wrong type.

    Example:
        >>> to_message({"role": "user", "content": "hi"})
        Message(role=<Role.USER: 'USER'>, content='hi', id=None, metadata=None)
    """
    if type(obj) is Message:
        return obj
    if type(obj) is dict and len(obj) == 2:
        # Fast path for the common JSON shape {"role": "user", "content": "..."}; anything unusual
        # falls through to the checks below, which produce the error messages.
        raw_role = obj.get("role")
        role = _ROLE_BY_NAME.get(raw_role) if type(raw_role) is str else None
        content = obj.get("content")
        if role is not None and type(content) is str:
            return Message(role, content)
    prefix = "message" if index is None else f"messages[{index}]"
    if isinstance(obj, Mapping):
        get = obj.get
    elif hasattr(obj, "role") or hasattr(obj, "content"):
        def get(key: str, default: object = None) -> object:
            return getattr(obj, key, default)
    else:
        raise StrategyInputError(prefix, f"expected an object with role and content, got {type(obj).__name__}")

    role = get("role", _MISSING)
    if role is _MISSING or role is None:
        raise StrategyInputError(f"{prefix}.role", "is required")
    role = Role.parse(role, field=f"{prefix}.role")
    content = get("content", _MISSING)
    if content is _MISSING or content is None:
        raise StrategyInputError(f"{prefix}.content", "is required")
    if not isinstance(content, str):
        raise StrategyInputError(f"{prefix}.content", f"must be a string, got {type(content).__name__}")
    msg_id = get("id", None)
    if msg_id is not None and (isinstance(msg_id, bool) or not isinstance(msg_id, int)):
        raise StrategyInputError(f"{prefix}.id", f"must be an integer, got {type(msg_id).__name__}")
    metadata = get("metadata", None)
    if metadata is not None and not isinstance(metadata, Mapping):
        raise StrategyInputError(f"{prefix}.metadata", f"must be an object, got {type(metadata).__name__}")
    return Message(role, content, msg_id, metadata)


def to_messages(messages: Iterable[object]) -> tuple[Message, ...]:
    """Convert every element with :func:`to_message`; Message elements are passed through without copying.

    Args:
        messages: Messages, JSON mappings or row-like objects, possibly mixed.

    Returns:
        A tuple of messages (the input is never modified).

    Raises:
        StrategyInputError: Naming the element at fault, e.g. ``messages[3].content``.

    Example:
        >>> to_messages([{"role": "system", "content": "be brief"}])[0].role
        <Role.SYSTEM: 'SYSTEM'>
    """
    if isinstance(messages, (str, bytes, Mapping)):
        raise StrategyInputError("messages", "must be a list of messages")
    try:
        items = tuple(messages)
    except TypeError:
        raise StrategyInputError("messages", "must be a list of messages") from None
    if _MESSAGE_ONLY >= set(map(type, items)):
        return items
    return tuple(m if type(m) is Message else to_message(m, i) for i, m in enumerate(items))


_MESSAGE_ONLY = frozenset({Message})
