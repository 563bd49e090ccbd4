"""System checks: a bad agents.yaml or database setting fails ``manage.py check``."""

from __future__ import annotations

from django.conf import settings
from django.core import checks
from django.core.checks.security.base import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)
from django.core.exceptions import ImproperlyConfigured

from memoryboard.agents_config import AgentConfigError, load_agents_config
from memoryboard.llm.factory import EMBEDDER_CHOICES, embedder_choice
from memoryboard.models.namespaces import SPELLINGS
from memoryboard.settings import MISSING_SECRET_KEY_PREFIX


def check_agents_config(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    try:
        load_agents_config(settings.MEMORYBOARD_AGENTS_FILE)
    except AgentConfigError as exc:
        return [
            checks.Error(
                f"Invalid agent configuration at '{exc.key}': {exc.message}",
                hint=f"Fix {settings.MEMORYBOARD_AGENTS_FILE} (MEMORYBOARD_AGENTS_FILE).",
                id="memoryboard.E001",
            )
        ]
    return []


def check_namespace_spelling(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    value = getattr(settings, "MEMORYBOARD_NAMESPACE_SPELLING", "compact")
    if value not in SPELLINGS:
        return [
            checks.Error(
                f"Unknown namespace spelling {value!r}.",
                hint=f"Set MEMORYBOARD_NAMESPACE_SPELLING to one of {', '.join(SPELLINGS)}.",
                id="memoryboard.E003",
            )
        ]
    return []


def check_database_backend(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    engine = settings.DATABASES["default"]["ENGINE"]
    supported = {"django.db.backends.sqlite3", "django.db.backends.mysql"}
    if engine not in supported:
        return [
            checks.Error(
                f"Unsupported database engine {engine!r}.",
                hint="Use SQLite (default) or MySQL/MariaDB through DATABASE_URL=mysql://...",
                id="memoryboard.E002",
            )
        ]
    return []


def check_embedder(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    choice = embedder_choice()
    if choice not in EMBEDDER_CHOICES:
        return [
            checks.Error(
                f"Unknown embedder {choice!r} in MEMORYBOARD_EMBEDDER.",
                hint="Use one of: " + ", ".join(EMBEDDER_CHOICES) + ".",
                id="memoryboard.E130",
            )
        ]
    if choice == "openai" and not (settings.OPENAI_BASE_URL and settings.OPENAI_EMBEDDING_MODEL):
        return [
            checks.Warning(
                "MEMORYBOARD_EMBEDDER=openai needs OPENAI_BASE_URL and OPENAI_EMBEDDING_MODEL; "
                "the offline embedder is used.",
                hint="Set both, or choose the offline embedder (MEMORYBOARD_EMBEDDER=use).",
                id="memoryboard.W131",
            )
        ]
    return []


def check_default_agent(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """The MCP server and imports write under MEMORYBOARD_DEFAULT_AGENT: it must keep long-term memory."""
    try:
        agents = load_agents_config(settings.MEMORYBOARD_AGENTS_FILE)
    except AgentConfigError:
        return []  # reported by check_agents_config
    agent = agents.get(settings.MEMORYBOARD_DEFAULT_AGENT)
    if agent is None or not agent.long_term_memory.enabled:
        return [
            checks.Warning(
                f"MEMORYBOARD_DEFAULT_AGENT {settings.MEMORYBOARD_DEFAULT_AGENT!r} is not an agent with long-term "
                "memory: the MCP server and imports without an agent will refuse to work.",
                hint="Set MEMORYBOARD_DEFAULT_AGENT to an agent of agents.yaml whose long-term-memory is enabled.",
                id="memoryboard.W004",
            )
        ]
    return []


def check_api_language(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """``MEMORYBOARD_API_DEFAULT_LANGUAGE`` must be one of ``LANGUAGES`` (api.middleware.ApiLocaleMiddleware)."""
    value = getattr(settings, "MEMORYBOARD_API_DEFAULT_LANGUAGE", "en")
    codes = [code for code, _name in settings.LANGUAGES]
    if value not in codes:
        return [
            checks.Error(
                f"Unknown API default language {value!r}.",
                hint=f"Set MEMORYBOARD_API_DEFAULT_LANGUAGE to one of {', '.join(codes)}.",
                id="memoryboard.E005",
            )
        ]
    return []


KEY_HINT = ("Set MEMORYBOARD_SECRET_KEY to one long random value shared by every worker and host, e.g. "
            "the output of: python -c \"import secrets; print(secrets.token_urlsafe(50))\" "
            "(or MEMORYBOARD_DEBUG=1 for a local demo).")


def weak_secret_key(key: str) -> bool:
    """What Django's deploy check (``security.W009``) calls weak: shorter than 50 characters, fewer than 5
    distinct ones, or made by ``startproject`` (``django-insecure-``)."""
    key = str(key)
    return (len(key) < SECRET_KEY_MIN_LENGTH or len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS
            or key.startswith(SECRET_KEY_INSECURE_PREFIX))


def check_secret_key(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """With DEBUG off, the key must come from MEMORYBOARD_SECRET_KEY (one key for every worker and host) and
    be one Django's deploy check would not call weak: a short key signs sessions and reset links anyone
    can forge by trying keys. Django only warns (``check --deploy``), and gunicorn runs no checks."""
    if settings.DEBUG:
        return []
    if str(settings.SECRET_KEY).startswith(MISSING_SECRET_KEY_PREFIX):
        return [
            checks.Error(
                "MEMORYBOARD_SECRET_KEY is not set and debug is off: each process would sign sessions with its "
                "own key, and signed-in users would be sent back to the login page.",
                hint=KEY_HINT,
                id="memoryboard.E010",
            )
        ]
    weak = [name for name, key in [("MEMORYBOARD_SECRET_KEY", settings.SECRET_KEY)]
            + [(f"SECRET_KEY_FALLBACKS[{i}]", key) for i, key in enumerate(getattr(settings, "SECRET_KEY_FALLBACKS", []))]
            if weak_secret_key(key)]
    return [
        checks.Error(
            f"{name} is weak and debug is off: it has fewer than {SECRET_KEY_MIN_LENGTH} characters or fewer than "
            f"{SECRET_KEY_MIN_UNIQUE_CHARACTERS} different ones, or was made by startproject "
            f"('{SECRET_KEY_INSECURE_PREFIX}'): sessions signed with it can be forged.",
            hint=KEY_HINT,
            id="memoryboard.E011",
        )
        for name in weak
    ]


def refuse_to_serve_on_errors() -> None:
    """Run the start-up checks in a WSGI process (gunicorn runs no system checks) and stop on an error.

    Raises:
        django.core.exceptions.ImproperlyConfigured: naming each error and its hint.
    """
    errors = [message for message in checks.run_checks(tags=[checks.Tags.security])
              if message.level >= checks.ERROR]
    if errors:
        raise ImproperlyConfigured("\n".join(f"{error.id}: {error.msg} HINT: {error.hint}" for error in errors))
