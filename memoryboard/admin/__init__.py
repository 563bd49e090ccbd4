"""Django admin of memoryboard: long-term memory, chat messages and the audit log.

Importing this package registers the model admins on ``admin.site`` (admin autodiscovery imports it).
"""

import functools

from django.contrib import admin
from django.core.exceptions import PermissionDenied

from memoryboard.admin.audit import AuditLogAdmin
from memoryboard.admin.chat import ChatMessageAdmin
from memoryboard.admin.memory import LongTermMemoryAdmin
from memoryboard.admin.receipts import RetrievalReceiptAdmin
from memoryboard.roles import is_developer

# The site is memoryboard (templates/admin/base_site.html shows the name, the dashboard links and the
# language switch). No model sidebar: its 280 px are the memory list's, which must fit 1366 px.
admin.site.site_header = admin.site.site_title = "memoryboard"
admin.site.enable_nav_sidebar = False
admin.site.index_template = "admin/memoryboard/index.html"


def _with_show_ids(site):
    """Every admin page knows whether its reader is a developer (``show_ids``): ids are theirs to read."""
    each_context = site.each_context

    @functools.wraps(each_context)
    def each_context_with_show_ids(request):
        return {**each_context(request), "show_ids": is_developer(request.user)}

    site.each_context = each_context_with_show_ids


_with_show_ids(admin.site)



def _signed_in_without_access(request) -> bool:
    return request.user.is_authenticated and not admin.site.has_permission(request)


def _forbid_signed_in_non_staff(site):
    """Someone signed in who may not use the admin (an end user) gets the site's 403 page, not Django's
    admin login form saying "authenticated as alice, but not authorized"; signed-out people still get the
    login form, and logging out still works."""
    login, admin_view = site.login, site.admin_view

    @functools.wraps(login)
    def login_or_403(request, extra_context=None):
        if _signed_in_without_access(request):
            raise PermissionDenied
        return login(request, extra_context)

    @functools.wraps(admin_view)
    def admin_view_or_403(view, cacheable=False):
        inner = admin_view(view, cacheable)

        @functools.wraps(inner)
        def wrapped(request, *args, **kwargs):
            if _signed_in_without_access(request) and not request.path.endswith("/logout/"):
                raise PermissionDenied
            return inner(request, *args, **kwargs)

        return wrapped

    site.login, site.admin_view = login_or_403, admin_view_or_403


_forbid_signed_in_non_staff(admin.site)

__all__ = ["AuditLogAdmin", "ChatMessageAdmin", "LongTermMemoryAdmin", "RetrievalReceiptAdmin"]
