"""Translated names of the codes the tables store (types, sources, reasons), for every page that shows them.

Stored codes (``FACT``, ``agent_tool``, ``user_deleted``, ``restore``) are data: a page shows their
label, never the code itself.
"""

from __future__ import annotations

import json

from django.utils.translation import gettext, gettext_lazy as _, ngettext

from memoryboard.models.chat import Role
from memoryboard.models.memory import ArchivedReason, MemoryType, Source

# Reasons written by the services next to the archive reasons (audit log, state history, versions): each is
# a code; what it is about (an item's id, a version, a person's note) is data in the row's ``details``
# (``reason_words`` turns both into words; ids only in ``reason_details_text``, for developers).
UNDO_DELETE = "undo delete"  # details: back_to (the archive reason it came back to, "" = in use)
MERGED_INTO = "merged into"  # details: id (the item kept)
MERGED_OTHERS = "merged others"  # details: ids (the items merged into this one)
SAME_ITEM_IN_USE = "not restored: same item in use"  # details: id (the item in use)
REVERT = "revert"  # details: version
STRATEGY = "memory strategy"  # details: strategy (its name)
EXTRACTED = "extracted from a conversation"  # details: withheld (kinds of secret not stored)
CONFLICT_FLAGGED = "conflict flagged"
REPLACEMENT_UNDONE = "replacement undone"  # the newer statement undone by its user; details: id (the older)
REPLACED_BY_UNDO = "back after an undone replacement"  # the older statement; details: id (the newer)
IMPORT = "import"
ASK_FIRST = "ask first"  # the user's "ask me first" changed (before/after: the agents)
RESPELL = "respell namespace"
RECONCILE_VERDICTS = ("new", "update", "same", "conflict")  # "reconcile <verdict>"; details: judge
NOTE = "note"  # details key: the words a person typed (support's reason for archiving)

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
    EXTRACTED: _("Noted automatically from a conversation"),
    CONFLICT_FLAGGED: _("Conflict flagged for review"),
    UNDO_DELETE: _("Undo of a delete"),
    MERGED_INTO: _("Merged into another item"),
    MERGED_OTHERS: _("Other items merged into this one"),
    SAME_ITEM_IN_USE: _("Not restored: the same item is in use"),
    REVERT: _("Reverted to an earlier version"),
    STRATEGY: _("Memory strategy applied"),
    REPLACEMENT_UNDONE: _("Replacement undone by the user"),
    REPLACED_BY_UNDO: _("In use again: the user undid its replacement"),
    IMPORT: _("Imported"),
    ASK_FIRST: _("“Ask me first” changed"),
    RESPELL: _("Namespace spelling corrected"),
    "reconcile new": _("Saved as a new statement"),
    "reconcile update": _("Saved; it replaces an earlier statement"),
    "reconcile same": _("Said again: counted, not stored twice"),
    "reconcile conflict": _("Saved; it contradicts an earlier statement (waits for a decision)"),
    "recorded before the first change": _("Recorded before the first change"),
}


def type_label(code: str) -> str:
    code = str(code or "").upper()
    return str(MemoryType(code).label) if code in MemoryType.values else code


def role_label(role: str) -> str:
    code = str(role or "").upper()
    return str(Role(code).label) if code in Role.values else str(role or "")


def source_label(code: str) -> str:
    return str(Source(code).label) if code in Source.values else str(code or "")


# The kinds of secret extraction withholds (``llm.cues.find_secrets``), in words.
SECRET_KINDS = {
    "password": _("a password"),
    "PIN or code": _("a PIN or code"),
    "card number": _("a card number"),
    "API key": _("an API key"),
    "ID number": _("an ID number"),
}


def reason_words(reason: str | None, details: dict | None = None) -> str:
    """An audit entry's, a state change's or a version's reason in words, in the page's language: from the
    stored code and its details (a version number, a state, the words a person typed), never an id. A
    text no service writes (a row older than the codes) reads as "Other change"."""
    reason = str(reason or "")
    details = details if isinstance(details, dict) else {}
    if not reason:
        return ""
    if reason in ArchivedReason.values:
        label = str(ArchivedReason(reason).label)
        note = str(details.get(NOTE) or "")
        return gettext("%(reason)s: “%(note)s”") % {"reason": label, "note": note} if note else label
    if reason == REVERT and details.get("version"):
        return gettext("Reverted to version %(n)s") % {"n": details["version"]}
    if reason == UNDO_DELETE:
        back = str(details.get("back_to") or "")
        if back in ArchivedReason.values:
            return gettext("Undo of a delete: back to “%(state)s”") % {"state": ArchivedReason(back).label}
        return gettext("Undo of a delete: in use again")
    if reason == STRATEGY and details.get("strategy"):
        return gettext("Memory strategy “%(name)s” applied") % {"name": details["strategy"]}
    if reason == MERGED_OTHERS and isinstance(details.get("ids"), list):
        n = len(details["ids"])
        return ngettext("%(n)d other item merged into this one", "%(n)d other items merged into this one",
                        n) % {"n": n}
    if reason == EXTRACTED and details.get("withheld"):
        kinds = [str(SECRET_KINDS.get(str(k), k)) for k in details["withheld"]]
        return gettext("Noted automatically from a conversation; not stored: %(kinds)s") % {
            "kinds": ", ".join(kinds)}
    if reason in OTHER_REASONS:
        return str(OTHER_REASONS[reason])
    return gettext("Other change")


def reason_label(reason: str | None, details: dict | None = None) -> str:
    """The translated reason of an audit entry or a state change: :func:`reason_words`."""
    return reason_words(reason, details)


def reason_details_text(details: dict | None) -> str:
    """The details of a reason as developers read them (ids, the judge): "id: 8b7c…; judge: rules"."""
    if not isinstance(details, dict) or not details:
        return ""
    return "; ".join(f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}"
                     for key, value in details.items())


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
