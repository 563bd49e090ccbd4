"""The security settings of a deployment, computed by one function.

Imported by the settings module, so it imports nothing from Django. A plain function of its inputs
lets the production values (secure cookies, HSTS) be unit-tested without reloading the settings.
"""

from __future__ import annotations


def security_settings(*, debug: bool, https: bool, hsts_seconds: int = 31_536_000, ssl_redirect: bool = True) -> dict:
    """The security settings that depend on the deployment.

    Args:
        debug: Django's DEBUG.
        https: Whether the site is served over HTTPS (``MEMORYBOARD_HTTPS``).
        hsts_seconds: ``Strict-Transport-Security`` max-age.
        ssl_redirect: Redirect plain HTTP to HTTPS.

    Returns:
        Setting names and values to put into the settings module. Secure cookies and HSTS only when
        served over HTTPS and not in debug: a debug server on http://127.0.0.1 must still accept logins.
    """
    values: dict = {
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "CSRF_COOKIE_SAMESITE": "Lax",
        "X_FRAME_OPTIONS": "DENY",
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "SECURE_REFERRER_POLICY": "same-origin",
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_SSL_REDIRECT": False,
    }
    if https and not debug:
        values.update(
            {
                "SESSION_COOKIE_SECURE": True,
                "CSRF_COOKIE_SECURE": True,
                "SECURE_HSTS_SECONDS": hsts_seconds,
                "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
                "SECURE_SSL_REDIRECT": ssl_redirect,
                "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
            }
        )
    return values
