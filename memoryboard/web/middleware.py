"""Content-Security-Policy: only the dashboard's own scripts, styles and images."""

from __future__ import annotations

from django.conf import settings

DEFAULT_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = getattr(settings, "MEMORYBOARD_CSP", DEFAULT_POLICY)

    def __call__(self, request):
        response = self.get_response(request)
        # The API docs page (Swagger UI) ships inline bootstrapping; it gets its own relaxed policy.
        if request.path.startswith("/api/docs/"):
            response.setdefault(
                "Content-Security-Policy",
                self.policy.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
                    "style-src 'self'", "style-src 'self' 'unsafe-inline'"
                ),
            )
        else:
            response.setdefault("Content-Security-Policy", self.policy)
        return response
