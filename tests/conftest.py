"""Shared fixtures: the fake OpenAI server, users of each role, tasks run inline."""

from __future__ import annotations

import os

import pytest

from tests.fakes.fixtures import *  # noqa: F401,F403  (fake_openai, openai_server, openai_settings)
from tests.ports import PORTS_VARIABLE, free_port

# Tests run with DEBUG off: the key that memoryboard.E010 asks for, for manage.py and gunicorn processes
# the tests start (they inherit the environment), and for this process (below).
TEST_SECRET_KEY = "tests-only-secret-key-" + "0" * 40
os.environ.setdefault("MEMORYBOARD_SECRET_KEY", TEST_SECRET_KEY)


@pytest.fixture(autouse=True)
def _tasks_inline_and_offline(settings):
    """Tasks run in the caller's thread; models are offline unless a test points them at the fake."""
    settings.MEMORYBOARD_TASKS_INLINE = True
    if settings.SECRET_KEY.startswith("memoryboard-missing-secret-key:"):
        settings.SECRET_KEY = os.environ["MEMORYBOARD_SECRET_KEY"]
    settings.MEMORYBOARD_ANN_FOLLOW_SECONDS = 0  # no follower thread: a staff search follows the index log
    settings.MEMORYBOARD_ERASE_FOLLOW_SECONDS = 0  # no erase follower: tests/privacy/test_erase_other_processes.py
    settings.OPENAI_BASE_URL = ""
    # The light embedder where meaning is not under test; ``use_embedder`` gives the default model.
    settings.MEMORYBOARD_EMBEDDER = "hashing"
    settings.LANGUAGE_CODE = "en"
    # Users are created in almost every test: PBKDF2's million rounds would cost a second each.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # The shared cache in this process's memory: a test needs no database to sign in, and counters never
    # outlive a test; tests/security/test_shared_limits.py runs the limits on the database cache.
    settings.CACHES = {**settings.CACHES, "shared": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                                     "LOCATION": "memoryboard-shared-tests"}}


@pytest.fixture(autouse=True)
def _fresh_cache(_tasks_inline_and_offline):
    """Per-process caches (the known agent namespaces, login throttling, vectors) never leak between
    tests (a rolled-back test may leave ids and timestamps to the next)."""
    from django.core.cache import cache, caches

    from memoryboard.ltm.write.reconcile_scope import forget_scope_indexes
    from memoryboard.ltm.search.vector_cache import scope_cache

    scope_cache.clear()
    forget_scope_indexes()  # the reconcile step's per-namespace indexes (ids repeat across tests)
    cache.clear()
    caches["shared"].clear()
    yield
    cache.clear()
    caches["shared"].clear()


@pytest.fixture
def use_embedder(settings):
    """The default offline model (loaded once per test process: the model is a process-wide singleton)."""
    settings.MEMORYBOARD_EMBEDDER = "use"
    from memoryboard.llm.factory import get_embedder

    return get_embedder()


def _make_user(django_user_model, username: str, *, groups=(), is_staff=False, is_superuser=False):
    from django.contrib.auth.models import Group

    from memoryboard.roles import ensure_role_groups

    ensure_role_groups()
    user = django_user_model.objects.create_user(
        username=username, password="pw-" + username, is_staff=is_staff, is_superuser=is_superuser
    )
    for name in groups:
        user.groups.add(Group.objects.get(name=name))
    return user


@pytest.fixture
def superuser(db, django_user_model):
    return _make_user(django_user_model, "root", is_staff=True, is_superuser=True)


@pytest.fixture
def support_user(db, django_user_model):
    return _make_user(django_user_model, "sam-support", groups=["support"], is_staff=True)


@pytest.fixture
def developer(db, django_user_model):
    return _make_user(django_user_model, "dev", groups=["developers"], is_staff=True)


@pytest.fixture
def alice(db, django_user_model):
    return _make_user(django_user_model, "alice")


@pytest.fixture
def bob(db, django_user_model):
    return _make_user(django_user_model, "bob")


@pytest.fixture
def login(client):
    """``login(user)`` signs the test client in and returns it."""

    def do(user):
        client.force_login(user)
        return client

    return do


@pytest.fixture
def make_memory(db):
    """Create a stored item for a user: make_memory(user, "content", type="FACT", agent="chat")."""
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.items import memory_create

    def make(user, content, *, memory_type="FACT", agent="chat", source="agent_tool", archived_reason=None):
        from memoryboard.ltm.store.items import memory_archive

        memory = memory_create(
            namespace=build_namespace(agent_namespace=agent, user_id=str(user.pk)),
            content=content,
            memory_type=memory_type,
            source=source,
            agent_id=agent,
        )
        if archived_reason:
            memory = memory_archive(memory=memory, actor=None, reason=archived_reason)
        return memory

    return make


def is_mysql() -> bool:
    from django.db import connection

    return connection.vendor == "mysql"


@pytest.fixture
def bob_named(bob):
    """bob with a full name and an e-mail, as the user directory shows him: "Bob Builder"."""
    bob.first_name, bob.last_name, bob.email = "Bob", "Builder", "bob@example.com"
    bob.save()
    return bob


# The live server (pytest-django's ``live_server``) on a port of MEMORYBOARD_TEST_PORTS when it is set
# (tests.ports); pytest-django reads this variable when the fixture starts.
if os.environ.get(PORTS_VARIABLE) and not os.environ.get("DJANGO_LIVE_TEST_SERVER_ADDRESS"):
    os.environ["DJANGO_LIVE_TEST_SERVER_ADDRESS"] = f"localhost:{free_port('localhost')}"
