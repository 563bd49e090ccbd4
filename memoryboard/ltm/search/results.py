"""What a search returns: the ranked results, and every candidate with its outcome (a receipt's lines)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from memoryboard.ltm.search import ranking
from memoryboard.models import LongTermMemory


class Outcome:
    """Why a candidate was or was not returned (retrieval receipts)."""

    RETURNED = "returned"
    PAUSED = "paused"
    EXPIRED = "expired"
    BELOW_THRESHOLD = "below_threshold"
    BEYOND_K = "beyond_k"
    NO_VECTOR = "no_vector"


_OUTCOME_NAMES = np.array(
    [Outcome.PAUSED, Outcome.BELOW_THRESHOLD, Outcome.RETURNED, Outcome.BEYOND_K, Outcome.EXPIRED], dtype=object
)


@dataclass(frozen=True)
class ScoredMemory:
    """A retrieved item, its final score and (for explanations) the parts of it."""

    memory: LongTermMemory
    score: float
    parts: ranking.ScoreParts | None = None
    # The relevance of an item standing in for one it replaced (``parts`` is None): the replaced one's.
    related: float | None = None

    @property
    def relevance(self) -> float:
        """How related the item is to the query (``ranking``'s ``relevance``, 0..1, not capped)."""
        if self.parts is not None:
            return self.parts.relevance
        return self.related if self.related is not None else 0.0

    def to_dict(self, *, explain: bool = False) -> dict:
        """The JSON shape used by the agent endpoint and the memory_search tool."""
        data = {
            "id": self.memory.pk,
            "type": self.memory.memory_type,
            "content": self.memory.content,
            "score": round(float(self.score), 4),
        }
        if explain and self.parts is not None:
            data["explain"] = self.parts.as_dict()
        return data


@dataclass(frozen=True)
class Candidate:
    """One candidate of a search, returned or not (a line of a retrieval receipt)."""

    memory_id: str
    outcome: str
    parts: ranking.ScoreParts | None

    def as_dict(self) -> dict:
        return {"id": self.memory_id, "outcome": self.outcome, **(self.parts.as_dict() if self.parts else {})}


@dataclass
class Ranking:
    """What :func:`memory_rank` found: the results, and every candidate with its outcome (best first).

    The candidates are kept as arrays and turned into ids, outcome names and :class:`Candidate` objects
    only when read (a receipt reads the first 20 and the counts; the evaluation all of them): at 100,000
    candidates the two lists cost ~10 ms of CPU per search.
    """

    query: str
    k: int
    model: str
    min_relevance: float
    results: list[ScoredMemory] = field(default_factory=list)
    index: str = "exact"  # or "hnsw"
    _scored: list[str] = field(default_factory=list)  # the scored candidates' ids, in the scope's order
    _order: np.ndarray | None = None  # positions in ``_scored``, best first
    _codes: np.ndarray | None = None  # each ranked candidate's outcome, an index into _OUTCOME_NAMES
    _scores: ranking.Scores | None = None  # aligned with ``_ids``
    _unscored: list[str] = field(default_factory=list)  # candidates without a vector

    def _ranked_ids(self, count: int | None = None) -> list[str]:
        if self._order is None:
            return []
        order = self._order if count is None else self._order[:count]
        return [self._scored[i] for i in order.tolist()]

    @cached_property
    def _ids(self) -> list[str]:
        """The scored candidates' ids, best first."""
        return self._ranked_ids()

    @cached_property
    def _outcomes(self) -> list[str]:
        """Their outcomes, aligned with ``_ids``."""
        return [] if self._codes is None else _OUTCOME_NAMES[self._codes].tolist()

    def top_candidates(self, n: int | None = None) -> list[Candidate]:
        """The first ``n`` candidates (all when ``None``), best first; those without a vector last."""
        total = 0 if self._order is None else len(self._order)
        count = total if n is None else min(n, total)
        parts = self._scores.parts_list(count) if count else []
        outcomes = _OUTCOME_NAMES[self._codes[:count]].tolist() if count else []
        found = [Candidate(pk, outcome, part) for pk, outcome, part in zip(self._ranked_ids(count), outcomes, parts)]
        rest = self._unscored if n is None else self._unscored[: max(0, n - count)]
        return found + [Candidate(pk, Outcome.NO_VECTOR, None) for pk in rest]

    @property
    def candidates(self) -> list[Candidate]:
        return self.top_candidates()

    def summary(self) -> dict:
        """Counts by outcome, in the order each first appears among the ranked candidates."""
        counts: dict[str, int] = {}
        if self._codes is not None and len(self._codes):
            tally = np.bincount(self._codes, minlength=len(_OUTCOME_NAMES))
            seen, first = np.unique(self._codes, return_index=True)
            for code in seen[np.argsort(first)].tolist():
                counts[_OUTCOME_NAMES[code]] = int(tally[code])
        if self._unscored:
            counts[Outcome.NO_VECTOR] = len(self._unscored)
        return counts
