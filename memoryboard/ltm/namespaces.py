"""Namespaces of long-term memory: ``["agent:{namespace}", "user:{userId}", "memories"]``.

A namespace is always built here, on the server side, from the authenticated caller and
the agent's configuration; never from an LLM tool argument or a request body.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

MEMORIES = "memories"


@dataclass(frozen=True, slots=True)
class Namespace:
    agent: str
    user_id: str

    def as_list(self) -> list[str]:
        return [f"agent:{self.agent}", f"user:{self.user_id}", MEMORIES]

    def as_text(self) -> str:
        """The stored form: the JSON array as compact text, as the platform (Jackson) writes it."""
        return json.dumps(self.as_list(), ensure_ascii=False, separators=(",", ":"))

    def __str__(self) -> str:
        return self.as_text()


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


def agent_prefix(agent_namespace: str) -> str:
    """The start of every stored namespace of one agent: an indexed prefix match."""
    return json.dumps([f"agent:{agent_namespace}"], ensure_ascii=False)[:-1] + ","


def user_suffix(user_id: str) -> str:
    """The end of every stored namespace of one user, whatever the agent."""
    return "," + json.dumps([f"user:{user_id}", MEMORIES], ensure_ascii=False, separators=(",", ":"))[1:]


def default_user_id(user) -> str:
    """The platform user id of a signed-in Django user (MEMORYBOARD_USER_ID_FUNCTION)."""
    return str(user.pk)
