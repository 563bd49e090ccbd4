"""Near-duplicate items suggested as merges: found here, merged only when a person says so.

Two current items of the same user and agent are suggested when one's text contains the other's (as the
memory tools' dedup compares them) or their vectors are nearly the same (``DUPLICATE_COSINE``). A merge
(``ltm.write.staff.memory_merge_selected``) keeps the item used most; "not duplicates" records the pair
(``value_json.distinctFrom`` on both) so it is not suggested again.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import QuerySet

from memoryboard.audit import audit_record
from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.store.items import memory_snapshot, normalize_content
from memoryboard.ltm.write.staff import merge_keeper
from memoryboard.models import AuditLog, LongTermMemory, MemoryEmbedding

# Cosine of two vectors of the offline embedder above which two texts say the same thing in other words
# ("User likes green tea" / "The user likes green tea": 0.97; "lives in Shanghai" / "lives in Berlin":
# below). Suggestions only: a person decides.
DUPLICATE_COSINE = 0.92
# Items compared per user and agent at most (pairs grow with the square).
MAX_GROUP = 1_000
# Items per user and agent up to which the text containment test runs too (it compares every pair).
CONTAINMENT_MAX = 300
REASON_DISTINCT = "not duplicates"


@dataclass(frozen=True)
class DuplicatePair:
    keep: LongTermMemory  # the one a merge would keep (used most)
    other: LongTermMemory
    similarity: float

    @property
    def key(self) -> str:
        return f"{self.keep.pk}|{self.other.pk}"


def _distinct(memory: LongTermMemory) -> set[str]:
    value = (memory.value_json or {}).get("distinctFrom") or []
    return {str(v) for v in value} if isinstance(value, list) else set()


def duplicate_suggestions(queryset: QuerySet[LongTermMemory], *, embedder=None, limit: int = 50) -> list[DuplicatePair]:
    """Pairs of current items of one user and agent that look like the same memory, most similar first."""
    if embedder is None:
        embedder = get_embedder()
    items = list(queryset.filter(archived=False).order_by("namespace", "pk")[: MAX_GROUP * 10])
    groups: dict[str, list[LongTermMemory]] = defaultdict(list)
    for memory in items:
        if len(groups[memory.namespace]) < MAX_GROUP:
            groups[memory.namespace].append(memory)
    vectors = {
        memory_id: np.frombuffer(blob, dtype=np.float32)
        for memory_id, blob in MemoryEmbedding.objects.filter(
            memory_id__in=[m.pk for m in items], model_name=embedder.name).values_list("memory_id", "vector")
    }
    pairs: list[DuplicatePair] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        texts = [normalize_content(m.content) for m in group]
        with_vec = [i for i, m in enumerate(group) if m.pk in vectors and vectors[m.pk].size == int(embedder.dim)]
        sims = np.full((len(group), len(group)), -1.0, dtype=np.float32)
        if len(with_vec) > 1:
            matrix = np.vstack([vectors[group[i].pk] for i in with_vec])
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = matrix / np.where(norms == 0, 1, norms)
            block = matrix @ matrix.T
            index = np.asarray(with_vec)
            sims[np.ix_(index, index)] = block
        close = {(int(i), int(j)) for i, j in np.argwhere(np.triu(sims >= DUPLICATE_COSINE, 1))}
        if len(group) <= CONTAINMENT_MAX:  # the text test is a Python loop over every pair
            close |= {(i, j) for i in range(len(group)) for j in range(i + 1, len(group))
                      if texts[i] and texts[j] and (texts[i] in texts[j] or texts[j] in texts[i])}
        for i, j in sorted(close):
            a, b = group[i], group[j]
            if b.pk in _distinct(a) or a.pk in _distinct(b):
                continue
            contained = bool(texts[i] and texts[j]) and (texts[i] in texts[j] or texts[j] in texts[i])
            keep = merge_keeper([a, b])
            pairs.append(DuplicatePair(keep=keep, other=b if keep is a else a,
                                       similarity=1.0 if contained else float(sims[i, j])))
    pairs.sort(key=lambda p: (-p.similarity, p.keep.pk, p.other.pk))
    return pairs[:limit]


def memory_duplicates_dismiss(*, a: LongTermMemory, b: LongTermMemory, actor) -> None:
    """Record that two items are not duplicates (never suggested again), audited on both."""
    with transaction.atomic():
        rows = list(LongTermMemory.objects.filter(pk__in=sorted({a.pk, b.pk})).order_by("pk").select_for_update())
        for row in rows:
            other = b.pk if row.pk == a.pk else a.pk
            distinct = sorted(_distinct(row) | {other})
            before = memory_snapshot(row)
            row.value_json = {**(row.value_json or {}), "distinctFrom": distinct}
            row.save(update_fields=["value_json"])
            audit_record(actor=actor, action=AuditLog.Action.UPDATE, object_type="memory", object_id=row.pk,
                         before=before, after=memory_snapshot(row), reason=REASON_DISTINCT)
