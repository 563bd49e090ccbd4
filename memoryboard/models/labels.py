"""Translated names of the codes the tables store (types, sources, reasons), for every page that shows them.

Stored codes (``FACT``, ``agent_tool``, ``user_deleted``, ``restore``) are data: a page shows their
label, never the code itself.
"""

from __future__ import annotations

import json

from django.utils.translation import gettext, gettext_lazy as _, ngettext

from memoryboard.models.chat import Role
from memoryboard.models.memory import ArchivedReason, MemoryType, Source

# Reasons written by the services next to the archive reasons (audit log and state history).
OTHER_REASONS = {
    "restore": _("Restored"),
    "pause": _("Paused"),
    "resume": _("Resumed"),
    "purged by a superuser": _("Purged by a superuser"),
    "retention period over": _("Retention period over"),
    "privacy request": _("Privacy request"),
    "delete all": _("Deleted with “delete all”"),
    "erase all my data": _("Erased by the user (“erase all my data”)"),
    # Review, conflicts, duplicates and expiry (ltm.write.review, ltm.write.duplicates, ltm.store.expiry).
    "approved in review": _("Approved in review"),
    "rejected in review": _("Rejected in review"),
    "conflict: kept the newer": _("Conflict: kept the newer"),
    "conflict: kept the older": _("Conflict: kept the earlier"),
    "conflict: kept both": _("Conflict: kept both"),
    "not duplicates": _("Not duplicates"),
    "expiry": _("Expiry changed"),
    # Reasons that say what happened in words: the ids and texts involved live in their own columns and in
    # the entry's before/after, which an erase empties (ltm.people.user_data).
    "extracted from a conversation": _("Noted automatically from a conversation"),
    "conflict flagged": _("Conflict flagged for review"),
}
EXTRACTED = "extracted from a conversation"
CONFLICT_FLAGGED = "conflict flagged"
UNDO_DELETE = "undo delete: back to "
# Entries written before reasons held no client-chosen value: "auto_extract from <conversation id>".
AUTO_EXTRACT_FROM = "auto_extract from "
MERGED_INTO = "merged into "  # + the id of the item kept
# A restore that found the same item in use (``ltm.store.items.memory_restore``), + that item's id.
SAME_ITEM_IN_USE = "not restored: same item in use: "


def type_label(code: str) -> str:
    code = str(code or "").upper()
    return str(MemoryType(code).label) if code in MemoryType.values else code


def role_label(role: str) -> str:
    code = str(role or "").upper()
    return str(Role(code).label) if code in Role.values else str(role or "")


def source_label(code: str) -> str:
    return str(Source(code).label) if code in Source.values else str(code or "")


def reason_label(reason: str | None) -> str:
    """The translated reason of an audit entry or a state change (free text is shown as it is)."""
    reason = str(reason or "")
    if reason in ArchivedReason.values:
        return str(ArchivedReason(reason).label)
    code, sep, note = reason.partition(": ")
    if sep and code in ArchivedReason.values:  # an archive reason with the actor's own words
        return gettext("%(reason)s: %(note)s") % {"reason": ArchivedReason(code).label, "note": note}
    if reason in OTHER_REASONS:
        return str(OTHER_REASONS[reason])
    if reason.startswith(UNDO_DELETE):
        return gettext("Undo of a delete: back to “%(state)s”") % {"state": reason_label(reason[len(UNDO_DELETE):])}
    if reason.startswith(AUTO_EXTRACT_FROM):  # the conversation's id is for developers (the audit entry keeps it)
        return gettext("Noted automatically from a conversation")
    if reason.startswith(MERGED_INTO):
        return gettext("Merged into item %(id)s") % {"id": reason[len(MERGED_INTO):]}
    if reason.startswith(SAME_ITEM_IN_USE):
        return gettext("Not restored: the same item is in use (%(id)s)") % {"id": reason[len(SAME_ITEM_IN_USE):]}
    if reason.startswith("revert to version "):
        return gettext("Reverted to version %(n)s") % {"n": reason[len("revert to version "):]}
    if reason.startswith("merged ") and reason != "merged":
        return gettext("Merged: %(ids)s") % {"ids": reason[len("merged "):]}
    if reason.startswith("memory strategy "):
        return gettext("Memory strategy %(name)s") % {"name": reason[len("memory strategy "):]}
    return reason


def _value_words(value) -> str:
    if isinstance(value, list):
        return ngettext("%(n)d entry", "%(n)d entries", len(value)) % {"n": len(value)}
    if isinstance(value, dict):
        return "…"
    return str(value)


def json_words(text: str) -> str | None:
    """A tool's JSON (its answer, a call's arguments) as a person reads it: an object as "key: value" pairs,
    a list as a count of results; ``None`` if ``text`` is not a JSON object or list."""
    if not isinstance(text, str) or text.lstrip()[:1] not in ("[", "{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list):
        return ngettext("%(n)d result", "%(n)d results", len(value)) % {"n": len(value)}
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_value_words(item)}" for key, item in value.items()) or "—"
    return None
