"""Who may do what through the API. Who may *see* what is memory_queryset_for / message_queryset_for."""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.permissions import SAFE_METHODS, BasePermission

from memoryboard.api.exceptions import ApplicationError
from memoryboard.ltm.store.items import end_user_may_edit, end_user_may_restore
from memoryboard.models.namespaces import parse_namespace
from memoryboard.roles import (
    can_apply_memory_strategy,
    can_change_any_memory,
    can_read_all_memories,
    may_write_memories_of,
    platform_user_id,
)


def memory_owner_id(memory) -> str | None:
    """The platform user id whose namespace holds ``memory`` (None for a namespace of no known shape)."""
    namespace = parse_namespace(memory.namespace)
    return namespace.user_id if namespace is not None else None


class MemoryAccess(BasePermission):
    """Writes on memories by the one role rule (``roles.may_write_memories_of``): support/superuser on
    any item, everyone else on their own (developers read every item and change only their own).

    The object is already one the caller may see (the view's queryset is scoped).
    """

    message = "Your role may read memories but not change them."

    def has_permission(self, request, view):
        user = request.user
        return bool(user and user.is_authenticated)

    def has_object_permission(self, request, view, obj):
        user = request.user
        if request.method in SAFE_METHODS:
            return True
        if not may_write_memories_of(user, owner_user_id=memory_owner_id(obj)):
            self.message = "Your role may read this user's memories but not change them."
            return False
        if can_change_any_memory(user):
            return True
        action = getattr(view, "action", None)
        if action == "archive":
            self.message = "Only support staff archive items; use DELETE to delete your own."
            return False
        if action == "restore" and obj.archived and not end_user_may_restore(obj):
            self.message = "Only support staff restore items that you did not delete yourself."
            return False
        if action in ("partial_update", "revert") and not end_user_may_edit(obj):
            self.message = "Archived and deleted items cannot be edited; only support staff change them."
            return False
        return True


class CanPlanMemoryStrategy(BasePermission):
    """Dry runs of memory strategies: support staff and developers."""

    message = "Only support staff and developers may plan memory strategies."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and can_read_all_memories(request.user))


class CanApplyMemoryStrategy(BasePermission):
    """Applying a memory strategy deletes stored messages: staff only (roles.can_apply_memory_strategy)."""

    message = "Only staff may apply memory strategies."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and can_apply_memory_strategy(request.user))


def import_target_user(*, caller, requested: str | None) -> str:
    """The platform user id an import writes for: the caller's own; another only for support and superusers."""
    target = requested or platform_user_id(caller)
    if not may_write_memories_of(caller, owner_user_id=target):
        raise ApplicationError(_("You can only import into your own memories."), field="user",
                               status_code=status.HTTP_403_FORBIDDEN, code="permission_denied")
    return target
