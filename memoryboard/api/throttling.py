"""Throttling of sign-ins, of the API token endpoint, and of the strategy endpoints.

Every counter lives in the ``shared`` cache (``MEMORYBOARD_SHARED_CACHE_URL``; the database by
default), which all workers and hosts see: a limit is the same whatever the number of processes.
Clients are told apart by the peer address (``REMOTE_ADDR``); ``X-Forwarded-For`` is read only when
``MEMORYBOARD_NUM_PROXIES`` says how many proxies in front of memoryboard append to it (DRF's
``NUM_PROXIES``), so a client cannot choose its own address.

Failed sign-ins are counted per client address and user name. Every sign-in path (the login page,
the admin, the API token endpoint) authenticates through :class:`ThrottledModelBackend`, so one
counter covers them all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import caches
from django.core.exceptions import PermissionDenied
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

LOGIN_FAILURE_LIMIT = 10
LOGIN_FAILURE_WINDOW_SECONDS = 60
SHARED_CACHE = "shared"
# A strategy request's slot frees itself after this even when its worker died holding it.
STRATEGY_SLOT_SECONDS = 600


def shared_cache():
    """The cache every worker sees (``CACHES["shared"]``)."""
    return caches[SHARED_CACHE]


def client_address(request) -> str:
    """The client's address: the peer, or the address the configured proxies saw (``NUM_PROXIES``)."""
    if request is None:
        return "-"
    meta = getattr(request, "META", {})
    peer = str(meta.get("REMOTE_ADDR") or "-")
    proxies = api_settings.NUM_PROXIES or 0  # None (DRF's "trust the header") is treated as 0
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return peer
    addresses = [part.strip() for part in str(forwarded).split(",")]
    return addresses[-min(proxies, len(addresses))] or peer


def login_failure_key(request, username: str | None) -> str:
    """Cache key of the failure counter of one client address and user name. The name is hashed: the
    shared cache is a database table, and no person's name is kept in it (an erase does not reach it)."""
    name = hashlib.sha256((username or "").strip().lower()[:150].encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"memoryboard:login-failures:{client_address(request)}:{name}"


def login_is_throttled(request, username: str | None) -> bool:
    """True when this address and user name had too many failed sign-ins in the window."""
    return int(shared_cache().get(login_failure_key(request, username), 0)) >= LOGIN_FAILURE_LIMIT


def login_record_failure(request, username: str | None) -> None:
    cache = shared_cache()
    key = login_failure_key(request, username)
    if not cache.add(key, 1, LOGIN_FAILURE_WINDOW_SECONDS):
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, LOGIN_FAILURE_WINDOW_SECONDS)


class ThrottledModelBackend(ModelBackend):
    """Django's ModelBackend, refusing a user name that failed too often from one address.

    While throttled even the right password is refused (the login form shows its usual error, the token
    endpoint answers 400/429), so guessing cannot continue. The counter expires after the window.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if login_is_throttled(request, username):
            # PermissionDenied stops authenticate() for every backend, not only this one.
            raise PermissionDenied("Too many failed sign-ins; try again in a minute.")
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            login_record_failure(request, username)
        return user


class SharedScopedRateThrottle(ScopedRateThrottle):
    """DRF's ScopedRateThrottle counted in the shared cache, per client address (never a forged header)."""

    @property
    def cache(self):
        return shared_cache()

    def get_ident(self, request):
        return client_address(request)


class StrategyBusy(Exception):
    """The user already runs as many strategy requests, or as many bytes of them, as allowed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _slot_keys(user_key: str) -> list[str]:
    limit = max(1, int(settings.MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER))
    return [f"memoryboard:strategy-slot:{user_key}:{index}" for index in range(limit)]


@contextmanager
def strategy_request_slot(*, user_key: str, body_bytes: int) -> Iterator[None]:
    """Hold one of the user's strategy slots while the block runs.

    A user runs at most ``MEMORYBOARD_STRATEGY_CONCURRENCY_PER_USER`` strategy requests at once, whose
    bodies together are at most ``MEMORYBOARD_STRATEGY_BYTES_PER_USER`` bytes, so one user cannot hold
    more than that share of the workers. A slot is one ``cache.add`` (atomic in every backend: an
    INSERT on the database cache); the byte sum is checked after taking it, so two requests racing
    for the last bytes are both refused rather than both admitted.

    Raises:
        StrategyBusy: no slot is free, or the bytes would go over the budget; nothing was read.
    """
    cache = shared_cache()
    keys = _slot_keys(user_key)
    budget = int(settings.MEMORYBOARD_STRATEGY_BYTES_PER_USER)
    held = None
    for key in keys:
        if cache.add(key, int(body_bytes), STRATEGY_SLOT_SECONDS):
            held = key
            break
    if held is None:
        raise StrategyBusy("concurrency")
    try:
        if budget:
            others = sum(int(value) for key, value in cache.get_many(keys).items() if key != held)
            if others + body_bytes > budget:
                raise StrategyBusy("bytes")
        yield
    finally:
        cache.delete(held)
