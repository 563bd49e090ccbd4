"""Reads of long-term memory. Scoping of what a caller may see lives here, once."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from memoryboard.ltm.namespaces import agent_prefix, user_suffix
from memoryboard.models import LongTermMemory
from memoryboard.roles import can_read_all_memories, platform_user_id


def memory_queryset_for(user) -> QuerySet[LongTermMemory]:
    """Every item the caller may read: all for support and developers, their own for end users."""
    if not getattr(user, "is_authenticated", False):
        return LongTermMemory.objects.none()
    if can_read_all_memories(user):
        return LongTermMemory.objects.all()
    return own_memories(user_id=platform_user_id(user))


def own_memories(*, user_id: str) -> QuerySet[LongTermMemory]:
    return LongTermMemory.objects.filter(namespace__endswith=user_suffix(user_id))


def filter_memories(
    qs: QuerySet[LongTermMemory],
    *,
    agent: str | None = None,
    user: str | None = None,
    memory_type: str | None = None,
    source: str | None = None,
    archived: bool | None = None,
    search: str | None = None,
) -> QuerySet[LongTermMemory]:
    """The filters shared by the admin, the API and "My memories"."""
    if agent:
        qs = qs.filter(namespace__startswith=agent_prefix(agent))
    if user:
        qs = qs.filter(namespace__endswith=user_suffix(user))
    if memory_type:
        qs = qs.filter(value_json__type=str(memory_type).upper())
    if source:
        qs = qs.filter(value_json__source=source)
    if archived is not None:
        qs = qs.filter(archived=archived)
    if search:
        qs = qs.filter(Q(value_json__content__icontains=search) | Q(pk=search))
    return qs
