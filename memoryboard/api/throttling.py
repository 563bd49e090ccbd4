"""Throttling of sign-ins and of the API token endpoint.

Failed sign-ins are counted per client address and user name in Django's cache. Every sign-in path
(the login page, the admin, the API token endpoint) authenticates through :class:`ThrottledModelBackend`,
so one counter covers them all.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied

LOGIN_FAILURE_LIMIT = 10
LOGIN_FAILURE_WINDOW_SECONDS = 60


def _client_address(request) -> str:
    if request is None:
        return "-"
    meta = getattr(request, "META", {})
    return str(meta.get("REMOTE_ADDR") or "-")


def login_failure_key(request, username: str | None) -> str:
    """Cache key of the failure counter of one client address and user name."""
    return f"memoryboard:login-failures:{_client_address(request)}:{(username or '').strip().lower()[:150]}"


def login_is_throttled(request, username: str | None) -> bool:
    """True when this address and user name had too many failed sign-ins in the window."""
    return int(cache.get(login_failure_key(request, username), 0)) >= LOGIN_FAILURE_LIMIT


def login_record_failure(request, username: str | None) -> None:
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

