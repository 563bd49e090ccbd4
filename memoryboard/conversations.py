"""Stored conversations (``chat_message``) and the strategies applied to them.

The one place where the framework-free strategy package meets the database: the API, the
playground and the agent runtime all come through here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Min, QuerySet
from django.utils.translation import gettext as _

from memoryboard.audit import audit_record
from memoryboard.llm.factory import get_summarizer
from memoryboard.models import AuditLog, ChatMessage, ConversationOwner
from memoryboard.models.labels import STRATEGY
from memoryboard.roles import can_read_all_memories, platform_user_id
from memoryboard.strategies import ContextResult, MemoryPlan, apply_context, plan_memory
from memoryboard.strategies.prompt_cache import CacheModel
from memoryboard.strategies.replay import replay
from memoryboard.summary_cache import ConversationSummaryCache


class ConversationNotFound(LookupError):
    pass


# A conversation id is part of page addresses (``/me/conversations/<id>/``) and of links in the
# pages: letters, digits and ``. _ : @ + = ~ -``, first a letter, digit or ``_`` (never "." or ".."),
# at most 255 characters (the column). UUIDs and the platform's ids fit.
MAX_CONVERSATION_ID = 255
CONVERSATION_ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:@+=~-]{0,254}")


def conversation_id_problem(value: Any) -> str | None:
    """Why ``value`` cannot name a conversation (a sentence for the 400), or None when it can."""
    if not isinstance(value, str):
        return _("A conversation id must be a string.")
    if len(value) > MAX_CONVERSATION_ID:
        return _("A conversation id has at most %(n)d characters.") % {"n": MAX_CONVERSATION_ID}
    if not CONVERSATION_ID_PATTERN.fullmatch(value):
        return _("A conversation id is letters, digits and . _ : @ + = ~ - (starting with a letter, a digit "
                 "or _); no '/', spaces or other characters.")
    return None


class StalePlanError(RuntimeError):
    """The conversation changed between the plan and its application."""


def _summarizer():
    return get_summarizer()


# --- ownership ---------------------------------------------------------------------------------


def conversation_claim(*, conversation_id: str, user_id: str, agent_id: str, fresh: bool = False) -> bool:
    """Claim ``conversation_id`` for this user and agent, or confirm they own it; False when it is
    someone else's (another user, or the same user with another agent).

    ``fresh``: the server has just made the id up (``uuid4``), so neither an owner nor a message can
    exist: the claim is the INSERT alone, without the two reads and the savepoint around it (4 of a
    proxied request's 16 statements; 2.3 → 0.7 ms of CPU, benchmarks/README.md § Proxy CPU per request).

    The claim is one INSERT into ``memoryboard_conversation_owner`` (primary key: the conversation id):
    of two first writers racing, exactly one INSERT succeeds and the other reads the winner's row.
    A conversation that has messages from before this table (written by the platform) belongs to the
    author of its first message; that owner is what the INSERT records, whoever asks first.
    """
    if fresh:
        ConversationOwner.objects.create(conversation_id=conversation_id, user_id=str(user_id), agent_id=str(agent_id))
        return True
    owner = ConversationOwner.objects.filter(conversation_id=conversation_id).values_list(
        "user_id", "agent_id").first()
    if owner is None:
        first = (
            ChatMessage.objects.filter(conversation_id=conversation_id).order_by("id")
            .values_list("user_id", "agent_id").first()
        )
        claimed = first or (str(user_id), str(agent_id))
        try:
            with transaction.atomic():
                ConversationOwner.objects.create(
                    conversation_id=conversation_id, user_id=claimed[0], agent_id=claimed[1]
                )
            owner = claimed
        except IntegrityError:  # another request claimed it first
            owner = ConversationOwner.objects.filter(conversation_id=conversation_id).values_list(
                "user_id", "agent_id").get()
    return tuple(owner) == (str(user_id), str(agent_id))


# --- reads -------------------------------------------------------------------------------------


def message_queryset_for(user) -> QuerySet[ChatMessage]:
    """Messages the caller may read: all for staff roles, their own conversations for end users."""
    if not getattr(user, "is_authenticated", False):
        return ChatMessage.objects.none()
    if can_read_all_memories(user):
        return ChatMessage.objects.all()
    return ChatMessage.objects.filter(user_id=platform_user_id(user))


def conversation_messages(conversation_id: str, *, queryset: QuerySet[ChatMessage] | None = None) -> list[ChatMessage]:
    qs = ChatMessage.objects.all() if queryset is None else queryset
    rows = list(qs.filter(conversation_id=conversation_id).order_by("id"))
    if not rows:
        raise ConversationNotFound(conversation_id)
    return rows


# How many messages a conversation has, on every page (the conversation list, the user page, the admin,
# the end user's conversation page, the playground): its stored rows, of every role. The instructions to
# the agent (a SYSTEM row), the user's and the agent's turns and each tool result are one message each. A
# system prompt that is not one of them (the prompt an agent builds for its next call, an Anthropic trace's
# top-level ``system``) is named beside the count ("system prompt + 32 messages"), never counted in it.


@dataclass(frozen=True)
class ConversationSummary:
    conversation_id: str
    agent_id: str
    user_id: str
    messages: int
    first_id: int
    started_at: Any
    last_at: Any


def conversation_list(*, queryset: QuerySet[ChatMessage] | None = None, limit: int = 200) -> list[ConversationSummary]:
    """The conversations of ``queryset``'s rows, latest first, each with its message count (see above).

    One entry per conversation id, whatever agent or user its rows name (the owner is its first row's).
    """
    qs = ChatMessage.objects.all() if queryset is None else queryset
    rows = list(
        qs.values("conversation_id")
        .annotate(messages=Count("id"), first_id=Min("id"), started_at=Min("created_at"), last_at=Max("created_at"))
        .order_by("-last_at", "conversation_id")[:limit]
    )
    owners = {pk: (agent, user) for pk, agent, user in ChatMessage.objects.filter(
        pk__in=[row["first_id"] for row in rows]).values_list("pk", "agent_id", "user_id")}
    return [ConversationSummary(**row, **dict(zip(("agent_id", "user_id"), owners.get(row["first_id"], ("", "")))))
            for row in rows]


def message_count(conversation_id: str, *, queryset: QuerySet[ChatMessage] | None = None) -> int:
    """The conversation's message count, as :func:`conversation_list` counts it."""
    qs = ChatMessage.objects.all() if queryset is None else queryset
    return qs.filter(conversation_id=conversation_id).count()


# --- context strategies --------------------------------------------------------------------------


def context_replay(
    messages: Sequence[Any],
    strategies: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    format: str | None = None,
    system: Any = None,
    cache: CacheModel | None = None,
) -> list:
    """Replay the messages call by call under each strategy with the configured summarizer, billed by
    ``cache`` (see :func:`memoryboard.strategies.replay.replay`; raises StrategyError on bad input)."""
    return replay(messages, strategies, format=format, system=system, summarizer=_summarizer(), cache=cache)


def context_apply(
    name: str,
    messages: Sequence[Any],
    params: Mapping[str, Any] | None = None,
    *,
    format: str | None = None,
    system: Any = None,
    keep_system: bool = False,
    cache_conversation: str | None = None,
) -> ContextResult:
    """Run a context strategy with the configured summarizer (raises StrategyError on bad input).

    ``format``, ``system`` and ``keep_system`` are :func:`~memoryboard.strategies.apply_context`'s: the
    messages' format (detected when ``None``), Anthropic's top-level system prompt, and whether the leading
    system messages are kept aside (the runtime and the playground's default). ``cache_conversation``:
    the stored conversation the messages are, whose cached summaries SUMMARIZE may reuse and extend.
    """
    cache = None
    if cache_conversation:
        cache = ConversationSummaryCache(cache_conversation)
    return apply_context(
        name, messages, params, summarizer=_summarizer(), format=format, system=system, keep_system=keep_system,
        summary_cache=cache,
    )


# --- memory strategies ---------------------------------------------------------------------------


def memory_plan(
    name: str, *, conversation_id: str, params: Mapping[str, Any] | None = None, rows: Sequence[Any] | None = None
) -> MemoryPlan:
    """The dry run: what the strategy would delete and insert (nothing is written).

    ``rows`` are the conversation's rows (or messages with ids) when the caller has already read them,
    e.g. the playground planning four strategies on one conversation; otherwise they are read here.
    """
    if rows is None:
        rows = conversation_messages(conversation_id)
    return plan_memory(name, rows, params, summarizer=_summarizer())


def memory_apply(
    name: str,
    *,
    conversation_id: str,
    params: Mapping[str, Any] | None = None,
    actor,
    expected_delete_ids: Sequence[int] | None = None,
) -> MemoryPlan:
    """Plan and apply a memory strategy in one transaction, audited with the deleted content.

    If ``expected_delete_ids`` is given (the plan the user confirmed) and the fresh plan differs,
    nothing is written and StalePlanError is raised. Any failure rolls everything back.
    """
    with transaction.atomic():
        rows = list(
            ChatMessage.objects.select_for_update().filter(conversation_id=conversation_id).order_by("id")
        )
        if not rows:
            raise ConversationNotFound(conversation_id)
        plan = plan_memory(name, rows, params, summarizer=_summarizer())
        if expected_delete_ids is not None and list(expected_delete_ids) != list(plan.delete_ids):
            raise StalePlanError("The conversation changed since the plan was shown; review the new plan.")
        if plan.is_empty:
            return plan
        by_id = {row.pk: row for row in rows}
        deleted = [
            {
                "id": row_id,
                "role": by_id[row_id].role,
                "content": by_id[row_id].content,
                "metadata": by_id[row_id].metadata,
                "created_at": by_id[row_id].created_at.isoformat(),
            }
            for row_id in plan.delete_ids
        ]
        ChatMessage.objects.filter(pk__in=plan.delete_ids).delete()
        template = rows[0]
        inserted = []
        for message in plan.inserts:
            source = by_id.get(message.id)
            row = ChatMessage.objects.create(
                id=message.id,
                conversation_id=conversation_id,
                agent_id=template.agent_id,
                user_id=template.user_id,
                role=str(message.role),
                content=message.content,
                metadata=dict(message.metadata) if message.metadata else None,
                created_at=source.created_at if source else template.created_at,
            )
            inserted.append({"id": row.pk, "role": row.role, "content": row.content})
        audit_record(
            actor=actor,
            action=AuditLog.Action.APPLY_STRATEGY,
            object_type="conversation",
            object_id=conversation_id,
            before={"deleted": deleted},
            after={"inserted": inserted, "strategy": plan.strategy, "params": dict(params or {})},
            reason=STRATEGY,
            details={"strategy": plan.strategy},
            subject_user_id=template.user_id,  # the rows may all be gone: the conversation's owner, as read
        )
    return plan
