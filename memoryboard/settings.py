"""Django settings for memoryboard, read from the environment.

Defaults are the embedded mode (SQLite file in the project, offline models,
tasks in process). Production sets DATABASE_URL, MEMORYBOARD_SECRET_KEY,
MEMORYBOARD_DEBUG=0, MEMORYBOARD_ALLOWED_HOSTS and the OPENAI_* variables.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("MEMORYBOARD_DEBUG", False)

# A development key only when DEBUG is on; with DEBUG off MEMORYBOARD_SECRET_KEY is required: a key made
# up per process would sign each worker's sessions differently. Without it the system check
# memoryboard.E010 stops manage.py and the WSGI application (memoryboard/wsgi.py) from starting; the
# placeholder below only lets them get that far.
MISSING_SECRET_KEY_PREFIX = "memoryboard-missing-secret-key:"
SECRET_KEY = os.environ.get("MEMORYBOARD_SECRET_KEY") or (
    "insecure-dev-key-only-for-debug" if DEBUG else ""
)
if not SECRET_KEY:
    import secrets

    SECRET_KEY = MISSING_SECRET_KEY_PREFIX + secrets.token_urlsafe(50)

ALLOWED_HOSTS = env_list("MEMORYBOARD_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("MEMORYBOARD_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",  # naturaltime: "just now", "3 minutes ago" in the end users' pages
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks",
    "memoryboard.apps.TasksDbConfig",  # django_tasks_db, named in the admin's languages
    "memoryboard.apps.MemoryboardConfig",
]

MIDDLEWARE = [
    # Writes of a request that began before the user's erase are refused (ltm.store.erase_gate).
    "memoryboard.ltm.store.erase_gate.WorkBegunMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # LocaleMiddleware, except that API clients naming no language get English (docs/decisions.md).
    "memoryboard.api.middleware.ApiLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "memoryboard.web.middleware.ContentSecurityPolicyMiddleware",
    "memoryboard.api.middleware.BodySizeLimitMiddleware",
    # With DEBUG on (the demo), the site's 404/500 pages instead of Django's technical ones.
    "memoryboard.web.errors.ErrorPagesMiddleware",
]

ROOT_URLCONF = "memoryboard.urls"
WSGI_APPLICATION = "memoryboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memoryboard.web.context_processors.models_in_use",
                "memoryboard.web.context_processors.navigation",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("MEMORYBOARD_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"charset": "utf8mb4", "init_command": "SET sql_mode='STRICT_TRANS_TABLES'"}
    )
    DATABASES["default"].setdefault("TEST", {}).update(
        {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}
    )
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several threads (tasks, the live test server) share the file: wait instead of failing; after
    # MEMORYBOARD_SQLITE_TIMEOUT seconds the request answers 503 with Retry-After. No write transaction
    # is held while a model is awaited (agent turns write after the reply), so waits are short.
    # WAL: readers never wait for the background writers (tasks, the access log); NORMAL sync is
    # durable across application crashes and skips an fsync per commit.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": env_int("MEMORYBOARD_SQLITE_TIMEOUT", 10), "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
         # A transaction that reads, then writes after another thread committed (the access log's
         # writer) fails at once with "database is locked" in WAL mode; IMMEDIATE waits for the lock.
         "transaction_mode": "IMMEDIATE"}
    )
    # Connections kept for MEMORYBOARD_CONN_MAX_AGE, as on MariaDB: closing the last connection to a WAL
    # file checkpoints it and removes the -wal file (fsyncs), 10 ms of every API request on this machine,
    # and the next commit creates it again (docs/decisions.md).

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", _("Simplified Chinese")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
FORMAT_MODULE_PATH = ["memoryboard.locale_formats"]  # thousands separators in Chinese (intcomma)
# The language of API answers (/api/, /v1/, /mcp/) to clients that send no Accept-Language.
MEMORYBOARD_API_DEFAULT_LANGUAGE = os.environ.get("MEMORYBOARD_API_DEFAULT_LANGUAGE", "en")
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Request size limit: bodies above it get a 413 from the API.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MEMORYBOARD_MAX_BODY_BYTES", 5 * 1024 * 1024)
# The strategy endpoints take whole agent traces (100k messages with tool calls are ~30 MB of JSON).
MEMORYBOARD_STRATEGY_MAX_BODY_BYTES = env_int("MEMORYBOARD_STRATEGY_MAX_BODY_BYTES", 64 * 1024 * 1024)

# Per user, at once, on the strategy endpoints: so many requests, bodies of so many bytes together
# (the rest get a 429 before their body is read): one user cannot hold more than this share of the workers.
MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER = env_int("MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER", 2)
MEMORYBOARD_STRATEGY_BYTES_PER_USER = env_int("MEMORYBOARD_STRATEGY_BYTES_PER_USER", 64 * 1024 * 1024)


def shared_cache_settings(url: str) -> dict:
    """The cache all workers share (throttles, strategy slots): the database's ``memoryboard_cache`` table
    (created by migrate) unless MEMORYBOARD_SHARED_CACHE_URL names ``redis://…`` or ``locmem://`` (one
    process only: tests and single-process runs)."""
    if url.startswith(("redis://", "rediss://")):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    if url.startswith("locmem://"):
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "memoryboard-shared"}
    return {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "memoryboard_cache",
            "OPTIONS": {"MAX_ENTRIES": 100_000}}


CACHES = {
    # Per process: what a process derives and may recompute (agent namespaces, user names).
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Seen by every worker and host: limits must not multiply with the number of processes.
    "shared": shared_cache_settings(os.environ.get("MEMORYBOARD_SHARED_CACHE_URL", "")),
}

# Security: computed by one function (memoryboard.security) so the production values are testable.
from memoryboard.security import security_settings  # noqa: E402

globals().update(
    security_settings(
        debug=DEBUG,
        https=env_bool("MEMORYBOARD_HTTPS", False),
        hsts_seconds=env_int("MEMORYBOARD_HSTS_SECONDS", 31536000),
        ssl_redirect=env_bool("MEMORYBOARD_SSL_REDIRECT", True),
    )
)
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page (hx-headers); keep Django's default

# Every sign-in path (login page, admin, API token) counts failures per address and user name.
AUTHENTICATION_BACKENDS = ["memoryboard.api.throttling.ThrottledModelBackend"]

REST_FRAMEWORK = {
    # Token first: an anonymous request gets 401 with WWW-Authenticate: Token (session-first would say 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memoryboard.shared.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Every JSON body through the one guard (depth, finite numbers, lone surrogates): a 400, never a 500.
    "DEFAULT_PARSER_CLASSES": [
        "memoryboard.api.parsers.GuardedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "memoryboard.api.exceptions.exception_handler",
    "DEFAULT_THROTTLE_RATES": {"login": os.environ.get("MEMORYBOARD_LOGIN_RATE", "10/min")},
    # Throttles key on the peer address; behind N proxies that append to X-Forwarded-For, set N.
    # 0 (default): the header is ignored, so a client cannot pick its own address.
    "NUM_PROXIES": env_int("MEMORYBOARD_NUM_PROXIES", 0),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "memoryboard API",
    "DESCRIPTION": "Inspect and manage the memory of LLM agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and Redoc served from drf-spectacular-sidecar's static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Tags per area, a summary on every operation, and the endpoints described by hand (/v1/, /mcp/).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memoryboard.api.schema_docs.postprocess_schema",
    ],
}

# Tasks: immediate in the embedded mode; deployments set the database backend and run db_worker.
TASKS = {
    "default": {
        "BACKEND": os.environ.get(
            "MEMORYBOARD_TASKS_BACKEND", "memoryboard.tasks_backend.ThreadBackend"
        ),
    }
}

# Tasks whose worker died (manage.py tasks_worker, memoryboard.task_recovery): a worker beats every
# HEARTBEAT seconds; a running task whose worker has not beaten for LOST seconds (or, run by a plain db_worker,
# started STALE seconds ago) is queued again (extraction, index updates; 3 runs at most) or marked failed.
MEMORYBOARD_WORKER_HEARTBEAT_SECONDS = env_int("MEMORYBOARD_WORKER_HEARTBEAT_SECONDS", 10)
MEMORYBOARD_WORKER_LOST_SECONDS = env_int("MEMORYBOARD_WORKER_LOST_SECONDS", 60)
MEMORYBOARD_TASK_STALE_SECONDS = env_int("MEMORYBOARD_TASK_STALE_SECONDS", 900)
MEMORYBOARD_TASK_RECOVER_SECONDS = env_int("MEMORYBOARD_TASK_RECOVER_SECONDS", 60)

# --- memoryboard ---------------------------------------------------------------------------
# The OpenAI-compatible endpoint. Without OPENAI_BASE_URL the offline models are used.
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_CHAT_MODEL = os.environ.get("OPENAI_CHAT_MODEL", "gpt-4o-mini")
OPENAI_EMBEDDING_MODEL = os.environ.get("OPENAI_EMBEDDING_MODEL", "text-embedding-3-small")
OPENAI_TIMEOUT_SECONDS = float(os.environ.get("OPENAI_TIMEOUT_SECONDS", "30"))
OPENAI_MAX_RETRIES = env_int("OPENAI_MAX_RETRIES", 1)
# The longest model reply accepted (characters of text and tool-call arguments); a longer one is a 502
# that says so, nothing of it stored. 1M characters stay under 4 MB in utf8mb4, well inside MariaDB's
# default 16 MB max_allowed_packet.
MEMORYBOARD_MAX_REPLY_CHARS = env_int("MEMORYBOARD_MAX_REPLY_CHARS", 1_000_000)

# The embedder, independent of the chat model: use (offline multilingual model, default), hashing
# (light hashed n-grams) or openai (OPENAI_EMBEDDING_MODEL at OPENAI_BASE_URL). Run reembed after a change.
MEMORYBOARD_EMBEDDER = os.environ.get("MEMORYBOARD_EMBEDDER", "use")

# Agent configuration (YAML); the repository's agents.yaml by default.
MEMORYBOARD_AGENTS_FILE = os.environ.get("MEMORYBOARD_AGENTS_FILE", str(BASE_DIR / "agents.yaml"))

# Maps a signed-in Django user to the platform's user id; default str(user.pk).
# Django's technical 404/500 pages when DEBUG is on (otherwise the site's own error pages, as in production).
CSRF_FAILURE_VIEW = "memoryboard.web.errors.csrf_failure"
MEMORYBOARD_TECHNICAL_ERROR_PAGES = env_bool("MEMORYBOARD_TECHNICAL_ERROR_PAGES", False)
# Even then (and in error reports), settings and request variables naming a database, a URL, a key or a
# secret are masked: DATABASE_URL may carry a password, OPENAI_BASE_URL a token.
DEFAULT_EXCEPTION_REPORTER = "memoryboard.web.errors.SiteExceptionReporter"
DEFAULT_EXCEPTION_REPORTER_FILTER = "memoryboard.web.errors.SecretsHiddenFilter"
# Where user names and e-mails come from (see memoryboard/users.py): a class or callable by dotted path.
MEMORYBOARD_USER_DIRECTORY = os.environ.get("MEMORYBOARD_USER_DIRECTORY", "memoryboard.users.DjangoUserDirectory")
MEMORYBOARD_USER_ID_FUNCTION = "memoryboard.users.default_user_id"

# The spelling memoryboard writes namespaces in: compact (Jackson's), spaced, compact-ascii, spaced-ascii.
# Reads find every spelling real writers produce (models.namespaces.namespace_spellings), whatever this is.
MEMORYBOARD_NAMESPACE_SPELLING = os.environ.get("MEMORYBOARD_NAMESPACE_SPELLING", "compact")

# Long-term memory lifecycle.
MEMORYBOARD_DECAY_FACTOR = float(os.environ.get("MEMORYBOARD_DECAY_FACTOR", "0.98"))
MEMORYBOARD_CLEANUP_SCORE_THRESHOLD = float(os.environ.get("MEMORYBOARD_CLEANUP_SCORE_THRESHOLD", "0.1"))
MEMORYBOARD_CLEANUP_MIN_ACCESS = env_int("MEMORYBOARD_CLEANUP_MIN_ACCESS", 3)
MEMORYBOARD_DELETED_RETENTION_DAYS = env_int("MEMORYBOARD_DELETED_RETENTION_DAYS", 30)
# Pasted playground traces not opened for this many days are removed by purge_deleted (0: kept forever).
MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS = env_int("MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS", 90)
# Items past their expiry are archived (reason "expired") this often by one process of the deployment, and at
# once when a read meets one (ltm.store.tasks). 0: no schedule (reads and memory_cleanup --apply still do).
MEMORYBOARD_EXPIRY_SWEEP_MINUTES = float(os.environ.get("MEMORYBOARD_EXPIRY_SWEEP_MINUTES", "5"))

# HNSW index files of large scopes (ltm.search.ann), one per embedding model; built by manage.py ann_rebuild.
MEMORYBOARD_ANN_DIR = os.environ.get("MEMORYBOARD_ANN_DIR", str(BASE_DIR / "var" / "ann"))
# How often each process's follower applies the index change log to this host's files (seconds; at once
# when a search sees a removal or a long backlog). 0: no thread; a staff search follows the log itself.
MEMORYBOARD_ANN_FOLLOW_SECONDS = float(os.environ.get("MEMORYBOARD_ANN_FOLLOW_SECONDS", "10"))
# How often each process looks for an erase made by another one, to empty its caches of what users said
# (ltm.people.process_texts). 0: no thread (the erasing process still empties its own).
MEMORYBOARD_ERASE_FOLLOW_SECONDS = float(os.environ.get("MEMORYBOARD_ERASE_FOLLOW_SECONDS", "5"))

# What searches build per scope (vectors, keyword index), kept in each process (ltm.search.vector_cache).
# 160 MB: a scope of ~110,000 items (1.4 KB each: the vector, its keyword postings, id and version).
MEMORYBOARD_VECTOR_CACHE_MB = float(os.environ.get("MEMORYBOARD_VECTOR_CACHE_MB", "160"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("MEMORYBOARD_LOG_LEVEL", "WARNING")},
    # Django's own console handler would print every logged error a second time next to the root's.
    "loggers": {"django": {"handlers": [], "level": "WARNING"}},
}

# The agent whose namespace MCP clients and imports use when none is named (`manage.py mcp --agent`, import's `agent`).
MEMORYBOARD_DEFAULT_AGENT = os.environ.get("MEMORYBOARD_DEFAULT_AGENT", "chat")
