"""Conflicts a person can settle: why two items conflict, every way to settle them, and what each way
keeps and loses, computed by doing it and rolling it back (``ltm.store.rehearsal``).

The ways (``Choice``):

- ``new``: keep the newer; the earlier is superseded by it (``review.memory_conflict_resolve``);
- ``old``: keep the earlier; the newer is rejected;
- ``both``: keep both; the marks are cleared;
- ``edit``: one item with a text the person writes: the newer takes it (a new version, audited), the earlier
  is superseded by it;
- ``merge``: ``edit`` with the text :func:`merged_text` proposes: the newer statement, and the parts of the
  earlier one about anything the newer does not restate ("I moved to Hamburg" + "work at SAP").

Why they conflict is said from the statements' slots (``write.statements``): the attribute both speak of,
in words, with each one's value; and the attributes the earlier one also holds that keeping only the newer
would lose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from django.db import transaction
from django.utils.translation import gettext as _

from memoryboard.ltm.store.items import MemoryError
from memoryboard.ltm.store.locks import namespace_lock
from memoryboard.ltm.store.rehearsal import Outcome, perform, rehearse
from memoryboard.ltm.store.selectors import namespace_q
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.review import memory_conflict_resolve
from memoryboard.ltm.write.statements import LIKES, PREFERRED, Slot, statement_slots
from memoryboard.models import LongTermMemory, VersionEvent
from memoryboard.models.namespaces import parse_namespace

Choice = Literal["new", "old", "both", "edit", "merge"]
CHOICES: tuple[str, ...] = ("new", "old", "both", "merge", "edit")
REASON_EDITED = "conflict: edited into one"
# Clauses of a statement, for a merge: split at commas, semicolons, full stops and "and" (and 、，；。和).
_CLAUSES = re.compile(r"\s*(?:[,;，；。、]|\band\b|和|并且|而且)\s*", re.IGNORECASE)


def attribute_label(key: str) -> str:
    """A slot's attribute in words (translated)."""
    if key.startswith(PREFERRED):
        return _("preferred %(category)s") % {"category": key[len(PREFERRED):]}
    if key.startswith(LIKES):
        return _("whether they like %(thing)s") % {"thing": key[len(LIKES):]}
    return {
        "residence": _("where they live"),
        "workplace": _("where they work"),
        "job": _("their job"),
        "name": _("their name"),
    }.get(key, key)


def _value(slot: Slot) -> str:
    if slot.key.startswith(LIKES):
        return _("yes") if slot.positive else _("no")
    return slot.value if slot.positive else _("no longer %(value)s") % {"value": slot.value}


@dataclass
class ConflictWhy:
    """Why two items conflict: the attributes they disagree on (label, earlier value, newer value), and
    the attributes only the earlier one states (lost if only the newer is kept)."""

    disagree: list[tuple[str, str, str]] = field(default_factory=list)
    only_earlier: list[tuple[str, str]] = field(default_factory=list)
    # Clauses of the earlier one whose attribute is not recognised and that the newer does not repeat.
    unrecognised: list[str] = field(default_factory=list)

    @property
    def sentence(self) -> str:
        if self.disagree:
            parts = "; ".join(_("%(attribute)s: “%(old)s” (earlier) or “%(new)s” (newer)")
                              % {"attribute": a, "old": o, "new": n} for a, o, n in self.disagree)
            text = _("They disagree on %(parts)s.") % {"parts": parts}
        else:
            text = _("They seem to say different things about the same subject; no single attribute was recognised.")
        parts = [f"{a}: “{v}”" for a, v in self.only_earlier] + [f"“{c}”" for c in self.unrecognised]
        if parts:
            text += " " + _("The earlier one also says %(parts)s, which the newer does not repeat.") % {
                "parts": "; ".join(parts)}
        return text


def _clause_slots(clause: str) -> list[Slot]:
    # A clause after "and" or a comma lost its subject ("work at SAP", 在SAP工作): read it with one.
    return statement_slots(clause) or statement_slots(_subject(clause) + clause)


def _slots(text: str) -> list[Slot]:
    """The slots of ``text`` and of each of its clauses."""
    found = list(statement_slots(text))
    for clause in _CLAUSES.split(text):
        if clause and clause.strip():
            found += [slot for slot in _clause_slots(clause.strip()) if slot not in found]
    return found


def conflict_why(*, new: LongTermMemory, old: LongTermMemory) -> ConflictWhy:
    """Why ``new`` and ``old`` conflict, from their statements' slots (and their clauses')."""
    new_slots, old_slots = _slots(new.content), _slots(old.content)
    why = ConflictWhy()
    new_keys = {s.key for s in new_slots}
    for n in new_slots:
        for o in old_slots:
            if n.key == o.key and (n.value, n.positive) != (o.value, o.positive):
                entry = (attribute_label(n.key), _value(o), _value(n))
                if entry not in why.disagree:
                    why.disagree.append(entry)
    for o in old_slots:
        entry = (attribute_label(o.key), _value(o))
        if o.key not in new_keys and entry not in why.only_earlier:
            why.only_earlier.append(entry)
    for clause in _CLAUSES.split(old.content):
        clause = (clause or "").strip()
        if clause and not _clause_slots(clause) and clause.lower() not in new.content.lower():
            why.unrecognised.append(clause)
    return why


def _subject(text: str) -> str:
    return "我" if re.search(r"[\u4e00-\u9fff]", text) else "I "


def merged_text(*, new: LongTermMemory, old: LongTermMemory) -> str:
    """One statement holding both: the newer text, then each clause of the earlier text that states an
    attribute the newer does not (or, when none is recognised, nothing of the earlier: the newer alone)."""
    new_keys = {s.key for s in _slots(new.content)}
    clauses = [c for c in _CLAUSES.split(old.content) if c and c.strip()]
    extra = []
    for clause in clauses:
        keys = {s.key for s in _clause_slots(clause.strip())}
        # A clause about nothing the newer restates: kept (one whose attribute is not recognised too, unless
        # the newer says it word for word), so a merge drops nothing it does not name.
        if not keys & new_keys and (keys or clause.strip().lower() not in new.content.lower()):
            extra.append(clause.strip())
    if not extra:
        return new.content
    joiner = "，" if re.search(r"[\u4e00-\u9fff]", new.content) else "; "
    return new.content.rstrip("。.;； ") + joiner + joiner.join(extra)


def _scope(memory: LongTermMemory):
    namespace = parse_namespace(memory.namespace)
    return lambda: LongTermMemory.objects.filter(namespace_q(namespace))


def _settle(*, new: LongTermMemory, old: LongTermMemory, choice: str, text: str, actor) -> None:
    if choice in ("new", "old", "both"):
        memory_conflict_resolve(new=new, old=old, keep=choice, actor=actor)
        return
    # Edit into one: the earlier item goes first (superseded by the newer), so the edited text is not
    # compared with it again; then the newer item takes the text.
    memory_conflict_resolve(new=new, old=old, keep="new", actor=actor)
    memory_update(memory=LongTermMemory.objects.get(pk=new.pk), actor=actor, content=text,
                  event=VersionEvent.EDIT, reason=REASON_EDITED)


def _checked(*, new: LongTermMemory, old: LongTermMemory, choice: str, text: str | None) -> str:
    if choice not in CHOICES:
        raise MemoryError(_("Choose how to settle: keep the newer, the earlier, both, merge or edit into one."),
                          field="choice")
    if choice == "merge":
        return merged_text(new=new, old=old)
    if choice == "edit":
        text = (text or "").strip()
        if not text:
            raise MemoryError(_("Write the one text to keep."), field="text")
        return text
    return ""


def conflict_settle(*, new: LongTermMemory, old: LongTermMemory, choice: str, actor, text: str | None = None,
                    dry_run: bool = False) -> Outcome:
    """Settle the flagged pair ``new``/``old`` by ``choice`` (``text``: the one text, for ``edit``), in one
    transaction under the namespace's lock; or (``dry_run``) do it and roll it back.

    Returns:
        What it did (would do) to the owner's items of the agent: kept, replaced, lost, changed.

    Raises:
        MemoryError: an unknown choice, an empty text, or not a flagged pair of current items.
    """
    text = _checked(new=new, old=old, choice=choice, text=text)
    run = rehearse if dry_run else perform
    with namespace_lock(parse_namespace(new.namespace)):
        _value, outcome = run(lambda: _settle(new=new, old=old, choice=choice, text=text, actor=actor),
                              scope=_scope(new))
    return outcome


@dataclass
class ChoicePreview:
    """One way to settle a conflict and what it keeps and loses (item texts)."""

    choice: str
    text: str  # the one text, for merge and edit
    outcome: Outcome
    error: str = ""

    @property
    def keeps(self) -> list[str]:
        o = self.outcome
        return [*(i.content for i in o.kept), *(i.content for i in o.created),
                *(after.content for _before, after in o.changed)]

    @property
    def loses(self) -> list[str]:
        o = self.outcome
        return [*(old.content for old, _new in o.replaced), *(i.content for i in o.lost),
                *(before.content for before, _after in o.changed), *(i.content for i in o.removed)]


def conflict_choices(*, new: LongTermMemory, old: LongTermMemory, actor, text: str | None = None) -> list[ChoicePreview]:
    """Every way to settle the pair, each done and rolled back: what each keeps and loses. ``text``: the
    person's own text for ``edit`` (default: the merge's proposal)."""
    proposal = merged_text(new=new, old=old)
    previews = []
    for choice in CHOICES:
        own = (text or proposal) if choice == "edit" else None
        try:
            with transaction.atomic():
                outcome = conflict_settle(new=new, old=old, choice=choice, actor=actor, text=own, dry_run=True)
        except MemoryError as exc:
            previews.append(ChoicePreview(choice=choice, text=own or "", outcome=Outcome(), error=exc.message))
            continue
        outcome.kept = [item for item in outcome.kept if item.id in (new.pk, old.pk)]  # not the owner's others
        previews.append(ChoicePreview(choice=choice, text=proposal if choice == "merge" else (own or ""),
                                      outcome=outcome))
    return previews
