"""What the "My memories" pages share: the one rule of whose items a page sees (:func:`own_items`), the
role rule for pages that change them, and the words an end user reads instead of stored codes."""

from __future__ import annotations

from datetime import timedelta
from functools import wraps

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from memoryboard.agents_config import agent_labels
from memoryboard.ltm.store.selectors import own_memories
from memoryboard.models import ArchivedReason, ChatMessage, LongTermMemory, MemoryAccess, MemoryType, PauseRule, Source
from memoryboard.roles import may_write_memories_of, platform_user_id


def writes_own_memories(view):
    """A page that changes the signed-in user's own items: POSTs go through the one role rule
    (``roles.may_write_memories_of``), as the API, MCP and /v1 do."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method == "POST" and not may_write_memories_of(
                request.user, owner_user_id=platform_user_id(request.user)):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def form_error(form) -> str:
    """The first error of a form, named by the field's (translated) label."""
    field, errors = next(iter(form.errors.items()))
    if field == "__all__":
        return str(errors[0])
    return _("%(field)s: %(error)s") % {"field": form.fields[field].label or field, "error": errors[0]}


def own_items(request) -> QuerySet[LongTermMemory]:
    return own_memories(user_id=platform_user_id(request.user))


def retention_cutoff():
    return timezone.now() - timedelta(days=settings.MEMORYBOARD_DELETED_RETENTION_DAYS)


def recently_deleted(request) -> QuerySet[LongTermMemory]:
    """The user's deletes that can still be undone (within the retention period)."""
    return deleted_items(request).filter(archived_at__gte=retention_cutoff())


def deleted_items(request) -> QuerySet[LongTermMemory]:
    """Everything the user deleted and that is not purged yet (past the retention period: purged soon)."""
    return own_items(request).filter(archived=True, archived_reason=ArchivedReason.USER_DELETED)


def not_deleted(request) -> QuerySet[LongTermMemory]:
    """What "delete" and "delete all" act on: every item of the user in every state but deleted."""
    return own_items(request).exclude(archived=True, archived_reason=ArchivedReason.USER_DELETED)


def item_usage(ids: list[str]) -> dict[str, dict]:
    """How often and when each item was used by an agent, in one query: the item's own counter
    (``access_count``, ``last_accessed_at``), the one source every page shows (the admin, the support
    desk), and the conversation of the latest logged use, if the access log has one."""
    if not ids:
        return {}
    latest = MemoryAccess.objects.filter(memory_id=OuterRef("pk")).order_by("-created_at", "-id")
    rows = (
        LongTermMemory.objects.filter(pk__in=ids, access_count__gt=0)
        .annotate(conversation=Subquery(latest.values("conversation_id")[:1]))
        .values("pk", "access_count", "last_accessed_at", "conversation")
    )
    return {row["pk"]: {"uses": row["access_count"], "last": row["last_accessed_at"],
                        "conversation": row["conversation"] or ""} for row in rows}


def own_messages(request) -> QuerySet[ChatMessage]:
    """The signed-in user's own stored messages (never someone else's, whatever their role)."""
    return ChatMessage.objects.filter(user_id=platform_user_id(request.user))


def source_words(source: str, agent: str) -> str:
    """Where an item came from, in plain words for its owner."""
    if source == Source.AUTO_EXTRACT:
        return _("noted by %(agent)s from a chat") % {"agent": agent}
    if source == Source.AGENT_TOOL:
        return _("saved by %(agent)s during a chat") % {"agent": agent}
    if source == Source.MANUAL:
        return _("added by you for %(agent)s") % {"agent": agent}
    return dict(Source.choices).get(source, source) if source else _("origin unknown")


def with_labels(memories: list[LongTermMemory]) -> list[LongTermMemory]:
    """Set what an end user reads instead of stored codes: ``type_label``, ``agent_label`` (the agent's
    display name), ``source_label`` (in words) and ``conversation_id`` (the source conversation, if known)."""
    types, agents = dict(MemoryType.choices), agent_labels()
    for memory in memories:
        memory.type_label = types.get(memory.memory_type, memory.memory_type)
        agent = memory.agent_id or memory.agent_namespace or ""
        memory.agent_label = agents.get(agent) or agents.get(memory.agent_namespace or "") or agent or _("an agent")
        memory.source_label = source_words(memory.source, memory.agent_label)
        memory.conversation_id = str((memory.value_json or {}).get("conversationId") or "")
    return memories


def pause_rules_of(user_id: str) -> list[tuple[str, str]]:
    return list(PauseRule.objects.filter(user_id=user_id).values_list("agent_namespace", "memory_type"))
