"""Roles of the dashboard: superuser, the ``support`` and ``developers`` groups, end users."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.utils.module_loading import import_string

SUPPORT_GROUP = "support"
DEVELOPERS_GROUP = "developers"


def _groups(user) -> set[str]:
    cached = getattr(user, "_memoryboard_groups", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True)) if user.is_authenticated else set()
        user._memoryboard_groups = cached
    return cached


def remember_role_groups(user, groups: set[str]) -> None:
    """Record which role groups ``user`` is in, read elsewhere (see ``api.authentication``)."""
    user._memoryboard_groups = set(groups) & {SUPPORT_GROUP, DEVELOPERS_GROUP}


def is_support(user) -> bool:
    return bool(user.is_authenticated and (user.is_superuser or SUPPORT_GROUP in _groups(user)))


def is_developer(user) -> bool:
    return bool(user.is_authenticated and (user.is_superuser or DEVELOPERS_GROUP in _groups(user)))


def can_read_all_memories(user) -> bool:
    """Support staff and developers read every user's items; developers read only."""
    return is_support(user) or is_developer(user)


def can_change_any_memory(user) -> bool:
    return is_support(user)


# --- the one rule of every surface ------------------------------------------------------------------
# Who may read and write whose long-term memories, the same on the REST API, the web pages (My memories,
# import), MCP and /v1 (and the agent chat API): every signed-in user reads and writes their own items;
# support staff and superusers read and change anyone's; developers read anyone's and change only their
# own; end users nobody else's. Staff-only actions (archive, purge, memory strategies) have their own
# functions above and below. README § Roles holds the same table; tests/security/test_role_rule.py checks
# every surface against it.


def may_read_memories_of(user, *, owner_user_id: str | None) -> bool:
    """May ``user`` read the items of the platform user ``owner_user_id``?"""
    if not getattr(user, "is_authenticated", False):
        return False
    return (owner_user_id is not None and str(owner_user_id) == platform_user_id(user)) or can_read_all_memories(user)


def may_write_memories_of(user, *, owner_user_id: str | None) -> bool:
    """May ``user`` create, import, edit, delete or restore items of the platform user ``owner_user_id``?"""
    if not getattr(user, "is_authenticated", False):
        return False
    return (owner_user_id is not None and str(owner_user_id) == platform_user_id(user)) or can_change_any_memory(user)


def can_purge(user) -> bool:
    return bool(user.is_authenticated and user.is_superuser)


def can_apply_memory_strategy(user) -> bool:
    """Memory strategies delete stored messages: staff only."""
    return bool(user.is_authenticated and (user.is_superuser or (user.is_staff and is_support(user))))


def platform_user_id(user) -> str:
    """The platform user id of a signed-in Django user (see MEMORYBOARD_USER_ID_FUNCTION)."""
    func = import_string(settings.MEMORYBOARD_USER_ID_FUNCTION)
    return str(func(user))


# Model permissions of each group (app label memoryboard); superusers have all.
GROUP_PERMISSIONS: dict[str, list[str]] = {
    SUPPORT_GROUP: [
        "view_longtermmemory",
        "change_longtermmemory",
        "add_longtermmemory",
        "view_chatmessage",
        "view_auditlog",
        "view_memoryaccess",
        "view_memorystatechange",
        "view_retrievalreceipt",
    ],
    DEVELOPERS_GROUP: [
        "view_longtermmemory",
        "view_chatmessage",
        "view_auditlog",
    ],
}


def ensure_role_groups(**kwargs) -> None:
    """Create the role groups with their permissions (post_migrate; idempotent)."""
    for name, codenames in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        perms = Permission.objects.filter(content_type__app_label="memoryboard", codename__in=codenames)
        group.permissions.add(*perms)
