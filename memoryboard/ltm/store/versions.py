"""Versions of an item's text and type: recorded at the write services, read as a history (a revert is an
edit: ``ltm.write.edits.memory_revert``).

Every change of an item's content or type is one ``MemoryVersion`` row (creation is version 1), written in
the transaction of the change by the services that write content (``write.items.memory_create``,
``write.edits.memory_update``, extraction, import, merge). Items stored before the table existed get their version 1
(the text as it was, "recorded later") the first time they change, so a history always starts with the
original text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max
from django.utils.translation import gettext

from memoryboard.models import LongTermMemory, MemoryVersion, Source, VersionEvent
from memoryboard.models.labels import reason_label
from memoryboard.roles import platform_user_id
from memoryboard.users import people

AGENT_LABEL = "agent"
SYSTEM_LABEL = "system"
# reason of a version 1 written when an item older than the history first changes
BASELINE_REASON = "recorded before the first change"


def _actor(actor, source: str = "") -> tuple[object | None, str]:
    """The user to store and the label for who changed it when nobody is signed in."""
    if getattr(actor, "is_authenticated", False):
        return actor, actor.get_username()[:150]
    if isinstance(actor, str) and actor:
        return None, actor[:150]
    return None, AGENT_LABEL if source in (Source.AGENT_TOOL, Source.MCP) else SYSTEM_LABEL


def version_record_created_many(
    memories: Iterable[LongTermMemory], *, actor=None, event: str = VersionEvent.CREATE, reason: str = "",
    details: dict | None = None,
) -> None:
    """Version 1 of new items, in one INSERT (call inside the transaction that stores them)."""
    rows = []
    for memory in memories:
        user, label = _actor(actor, memory.source)
        rows.append(MemoryVersion(
            memory_id=memory.pk, version=1, event=event, actor=user, actor_label=label, reason=reason[:255],
            details=details or None, before_content=None, before_type="", after_content=memory.content, after_type=memory.memory_type,
            created_at=memory.created_at,
        ))
    MemoryVersion.objects.bulk_create(rows, batch_size=500, ignore_conflicts=False)


def version_record_change(
    *, memory: LongTermMemory, before_value: dict, actor=None, event: str = VersionEvent.EDIT, reason: str = "",
    details: dict | None = None,
) -> MemoryVersion:
    """The next version of a changed item (the caller holds the item's row lock).

    ``before_value`` is the item's ``value_json`` before the change; the item itself is after it.
    """
    last = MemoryVersion.objects.filter(memory_id=memory.pk).aggregate(n=Max("version"))["n"]
    before_content = str(before_value.get("content", ""))
    before_type = str(before_value.get("type", ""))
    if last is None:  # stored before versions were kept: its original text becomes version 1
        MemoryVersion.objects.create(
            memory_id=memory.pk, version=1, event=VersionEvent.CREATE, actor=None, actor_label="",
            reason=BASELINE_REASON, before_content=None, before_type="", after_content=before_content,
            after_type=before_type, created_at=memory.created_at,
        )
        last = 1
    user, label = _actor(actor, memory.source)
    return MemoryVersion.objects.create(
        memory_id=memory.pk, version=last + 1, event=event, actor=user, actor_label=label, reason=reason[:255],
        details=details or None, before_content=before_content, before_type=before_type,
        after_content=memory.content, after_type=memory.memory_type,
    )


@dataclass(frozen=True)
class VersionEntry:
    """One line of an item's history, as pages and the API show it."""

    version: int
    event: str
    event_label: str
    who: str
    when: datetime
    reason: str
    before_content: str | None
    before_type: str
    after_content: str
    after_type: str
    details: dict | None = None

    @property
    def reason_words(self) -> str:
        return reason_text(self.reason, self.details)

    def as_dict(self) -> dict:
        return {
            "version": self.version, "event": self.event, "who": self.who, "when": self.when,
            "why": self.reason, "details": self.details,
            "before": None if self.before_content is None else {"content": self.before_content, "type": self.before_type},
            "after": {"content": self.after_content, "type": self.after_type},
        }


def _who(rows: list[MemoryVersion]) -> dict[int, str]:
    """Display names of the actors (the user directory), "the agent" / "system" otherwise."""
    ids = {row.pk: platform_user_id(row.actor) for row in rows if row.actor_id and row.actor}
    found = people(set(ids.values())) if ids else {}
    names = {}
    for row in rows:
        if row.pk in ids:
            names[row.pk] = found[ids[row.pk]].name
        elif row.actor_label == AGENT_LABEL:
            names[row.pk] = gettext("the agent")
        elif row.actor_label in ("", SYSTEM_LABEL):
            names[row.pk] = gettext("system")
        else:
            names[row.pk] = row.actor_label
    return names


def memory_history(*, memory: LongTermMemory) -> list[VersionEntry]:
    """The item's versions, oldest first. An item never changed since before versions were kept shows its
    text as version 1 (not stored until it changes)."""
    rows = list(MemoryVersion.objects.filter(memory_id=memory.pk).select_related("actor").order_by("version"))
    if not rows:
        return [VersionEntry(
            version=1, event=VersionEvent.CREATE, event_label=str(VersionEvent.CREATE.label), who=gettext("system"),
            when=memory.created_at, reason=BASELINE_REASON, before_content=None, before_type="",
            after_content=memory.content, after_type=memory.memory_type,
        )]
    names = _who(rows)
    return [
        VersionEntry(
            version=row.version, event=row.event,
            event_label=str(VersionEvent(row.event).label) if row.event in VersionEvent.values else row.event,
            who=names[row.pk], when=row.created_at, reason=row.reason, before_content=row.before_content,
            before_type=row.before_type, after_content=row.after_content, after_type=row.after_type,
            details=row.details,
        )
        for row in rows
    ]


def reason_text(reason: str, details: dict | None = None) -> str:
    """A version's reason in words (``models.labels.reason_words``: no ids, in the page's language)."""
    return reason_label(reason, details)
