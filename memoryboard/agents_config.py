"""Agent configuration from YAML (``agents.yaml`` or MEMORYBOARD_AGENTS_FILE).

Defaults plus per-agent overrides::

    agent:
      defaults:
        long-term-memory: {enabled: false, namespace: default, max-items: 100, auto-extract: true,
                           auto-load: true, load-max-items: 10}
        memory-tools: false
      agents:
        chat: {memory-tools: true, long-term-memory: {enabled: true, namespace: chat, max-items: 200}}

Unknown keys and wrong types raise AgentConfigError naming the key (a system check reports it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.utils.translation import get_language

from memoryboard.strategies import StrategyConfigError, parse_params

LTM_DEFAULTS: dict[str, Any] = {
    "enabled": False,
    "namespace": "default",
    "max-items": 100,
    "auto-extract": True,
    "auto-load": True,
    "load-max-items": 10,
    "ttl-days": None,
    "refresh-on-read": False,
    "memory-review": "auto",
}
# Item types (models.MemoryType, kept here as text: this module reads YAML only).
MEMORY_TYPES = ("FACT", "PREFERENCE", "PROCEDURE", "EPISODE")
# Who approves an agent's new items before they are used: nobody (auto), items the writer was unsure of
# (low_confidence: a reconcile conflict or a judge's low confidence), every item (all).
MEMORY_REVIEW_CHOICES = ("auto", "low_confidence", "all")
CONTEXT_DEFAULTS: dict[str, Any] = {"strategy": "COMPOSITE", "params": {}}
AGENT_DEFAULTS: dict[str, Any] = {
    "name": "",
    "memory-tools": False,
    "long-term-memory": LTM_DEFAULTS,
    "context": CONTEXT_DEFAULTS,
}
_LTM_TYPES = {
    "enabled": bool,
    "namespace": str,
    "max-items": int,
    "auto-extract": bool,
    "auto-load": bool,
    "load-max-items": int,
    "ttl-days": (int, dict, type(None)),
    "refresh-on-read": bool,
    "memory-review": str,
}
_CONTEXT_TYPES = {"strategy": str, "params": dict}


class AgentConfigError(ValueError):
    def __init__(self, key: str, message: str):
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}")


@dataclass(frozen=True)
class LongTermMemoryConfig:
    enabled: bool
    namespace: str
    max_items: int
    auto_extract: bool
    auto_load: bool
    load_max_items: int
    # Days an item lives after it is saved (or last read, with refresh_on_read), per type; a type not
    # named lives until removed. ``{}``: no expiry.
    ttl_days: dict = field(default_factory=dict)
    refresh_on_read: bool = False
    memory_review: str = "auto"

    def ttl_for(self, memory_type: str) -> int | None:
        return self.ttl_days.get(str(memory_type or "").upper())


@dataclass(frozen=True)
class AgentConfig:
    agent_id: str
    name: str
    memory_tools: bool
    long_term_memory: LongTermMemoryConfig
    context_strategy: str
    context_params: dict = field(default_factory=dict)
    # The name per language code (lower case), when agents.yaml gives one per language.
    names: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The name in the current language (``zh-hans``, then ``zh``), else the default ``name``."""
        if self.names:
            language = (get_language() or "").lower()
            for code in (language, language.split("-")[0]):
                if code in self.names:
                    return self.names[code]
        return self.name


@dataclass(frozen=True)
class AgentsConfig:
    agents: dict[str, AgentConfig]
    defaults: AgentConfig
    source: str

    def get(self, agent_id: str) -> AgentConfig | None:
        return self.agents.get(agent_id)

    def __iter__(self):
        return iter(self.agents.values())


def _type_name(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(_type_name(one) for one in t if one is not type(None))
    return {bool: "a boolean", int: "an integer", str: "a string", dict: "a mapping"}[t]


def _check_ttl(value, path: str) -> dict[str, int]:
    """``ttl-days``: days for every type (an integer) or per type (``{EPISODE: 30, PROCEDURE: 90}``)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        raise AgentConfigError(path, f"must be an integer or a mapping of type to days, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise AgentConfigError(path, f"must be at least 1, got {value}")
        return {t: value for t in MEMORY_TYPES}
    out = {}
    for key, days in value.items():
        name = str(key).upper()
        if name not in MEMORY_TYPES:
            raise AgentConfigError(f"{path}.{key}", f"unknown memory type (allowed: {', '.join(MEMORY_TYPES)})")
        if not isinstance(days, int) or isinstance(days, bool) or days < 1:
            raise AgentConfigError(f"{path}.{key}", f"must be a whole number of days, at least 1, got {days!r}")
        out[name] = days
    return out


def _check_section(data: Any, types: dict[str, type], path: str) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise AgentConfigError(path, "must be a mapping")
    for key, value in data.items():
        if key not in types:
            allowed = ", ".join(sorted(types))
            raise AgentConfigError(f"{path}.{key}", f"unknown key (allowed: {allowed})")
        expected = types[key]
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if not ok:
            raise AgentConfigError(f"{path}.{key}", f"must be {_type_name(expected)}, got {value!r}")
        if key == "ttl-days" and ok:
            continue  # checked by _check_ttl once merged
        if key == "memory-review" and ok and value not in MEMORY_REVIEW_CHOICES:
            raise AgentConfigError(f"{path}.{key}", f"must be one of {', '.join(MEMORY_REVIEW_CHOICES)}, got {value!r}")
        if expected is int and value < 1:
            raise AgentConfigError(f"{path}.{key}", f"must be at least 1, got {value}")
        if expected is str and not value.strip():
            raise AgentConfigError(f"{path}.{key}", "must not be empty")
    return dict(data)


def _check_agent(data: Any, path: str) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise AgentConfigError(path, "must be a mapping")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "long-term-memory":
            out[key] = _check_section(value, _LTM_TYPES, f"{path}.{key}")
            if "ttl-days" in out[key]:
                out[key]["ttl-days"] = _check_ttl(out[key]["ttl-days"], f"{path}.{key}.ttl-days")
        elif key == "context":
            section = _check_section(value, _CONTEXT_TYPES, f"{path}.{key}")
            if "strategy" in section:
                _check_strategy(section, f"{path}.{key}")
            out[key] = section
        elif key == "memory-tools":
            if not isinstance(value, bool):
                raise AgentConfigError(f"{path}.{key}", f"must be a boolean, got {value!r}")
            out[key] = value
        elif key == "name":
            # One name, or one per language: {en: Chat assistant, zh-hans: 通用助手}.
            if isinstance(value, dict):
                if not value or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()):
                    raise AgentConfigError(f"{path}.{key}", f"must map languages to names, got {value!r}")
            elif not isinstance(value, str):
                raise AgentConfigError(f"{path}.{key}", f"must be a string or languages to names, got {value!r}")
            out[key] = value
        else:
            raise AgentConfigError(
                f"{path}.{key}", "unknown key (allowed: context, long-term-memory, memory-tools, name)"
            )
    return out


def _check_strategy(section: dict, path: str) -> None:
    try:
        parse_params(section["strategy"], section.get("params") or {})
    except StrategyConfigError as exc:
        raise AgentConfigError(f"{path}.{exc.field or 'strategy'}", exc.message) from exc


def _merge(defaults: dict, override: dict) -> dict:
    merged = dict(defaults)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key != "params":
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def _build(agent_id: str, data: dict) -> AgentConfig:
    ltm = data["long-term-memory"]
    name = data.get("name") or agent_id
    names = {str(k).lower(): v for k, v in name.items()} if isinstance(name, dict) else {}
    if names:
        name = names.get("en") or next(iter(names.values()))
    return AgentConfig(
        agent_id=agent_id,
        name=name,
        names=names,
        memory_tools=data["memory-tools"],
        long_term_memory=LongTermMemoryConfig(
            enabled=ltm["enabled"],
            namespace=ltm["namespace"],
            max_items=ltm["max-items"],
            auto_extract=ltm["auto-extract"],
            auto_load=ltm["auto-load"],
            load_max_items=ltm["load-max-items"],
            ttl_days=dict(ltm["ttl-days"] or {}),
            refresh_on_read=ltm["refresh-on-read"],
            memory_review=ltm["memory-review"],
        ),
        context_strategy=str(data["context"]["strategy"]).upper(),
        context_params=dict(data["context"].get("params") or {}),
    )


def parse_agents_config(raw: Any, *, source: str = "<string>") -> AgentsConfig:
    """Validate a loaded YAML document and build the per-agent configuration.

    Raises:
        AgentConfigError: naming the first unknown key or wrongly typed value.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise AgentConfigError("(root)", "must be a mapping with the key 'agent'")
    unknown = set(raw) - {"agent"}
    if unknown:
        raise AgentConfigError(sorted(unknown)[0], "unknown key (allowed: agent)")
    section = raw.get("agent") or {}
    if not isinstance(section, dict):
        raise AgentConfigError("agent", "must be a mapping")
    unknown = set(section) - {"defaults", "agents"}
    if unknown:
        raise AgentConfigError(f"agent.{sorted(unknown)[0]}", "unknown key (allowed: agents, defaults)")

    defaults = _merge(AGENT_DEFAULTS, _check_agent(section.get("defaults"), "agent.defaults"))
    agents_raw = section.get("agents") or {}
    if not isinstance(agents_raw, dict):
        raise AgentConfigError("agent.agents", "must be a mapping of agent id to settings")
    agents: dict[str, AgentConfig] = {}
    for agent_id, override in agents_raw.items():
        agent_id = str(agent_id)
        checked = _check_agent(override, f"agent.agents.{agent_id}")
        agents[agent_id] = _build(agent_id, _merge(defaults, checked))
    return AgentsConfig(agents=agents, defaults=_build("*", defaults), source=source)


def load_agents_config(path: str | Path) -> AgentsConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise AgentConfigError("(file)", f"agents file not found: {path}") from exc
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AgentConfigError("(file)", f"invalid YAML in {path}: {exc}") from exc
    return parse_agents_config(raw, source=str(path))


_lock = threading.Lock()
_cached: AgentsConfig | None = None


def get_agents_config() -> AgentsConfig:
    """The configuration named by settings.MEMORYBOARD_AGENTS_FILE, loaded once."""
    global _cached
    if _cached is None:
        with _lock:
            if _cached is None:
                _cached = load_agents_config(settings.MEMORYBOARD_AGENTS_FILE)
    return _cached


def reset_agents_config() -> None:
    global _cached
    _cached = None


def agent_labels() -> dict[str, str]:
    """Display names of the agents (``name`` in agents.yaml), by agent id and by memory namespace."""
    labels: dict[str, str] = {}
    for agent_id, cfg in sorted(get_agents_config().agents.items()):
        labels[agent_id] = cfg.label
        labels.setdefault(cfg.long_term_memory.namespace, cfg.label)
    return labels
