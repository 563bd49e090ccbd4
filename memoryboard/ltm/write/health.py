"""Memory health of one user, per agent: current, paused, superseded, waiting for review, conflicts waiting,
duplicates suggested, expiring soon (reads only; shown on the support user page and in My memories)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, QuerySet
from django.utils import timezone

from memoryboard.ltm.store.expiry import expiring_soon
from memoryboard.ltm.write.duplicates import duplicate_suggestions
from memoryboard.ltm.write.review import conflict_pairs
from memoryboard.ltm.store.states import state_q
from memoryboard.models import LongTermMemory, MemoryState
from memoryboard.models.namespaces import parse_namespace

EXPIRING_SOON_DAYS = 7


@dataclass
class AgentHealth:
    agent: str
    current: int = 0
    paused: int = 0
    superseded: int = 0
    pending: int = 0
    conflicts: int = 0
    duplicates: int = 0
    expiring: int = 0
    extra: dict = field(default_factory=dict)


def _agent(namespace: str) -> str:
    ns = parse_namespace(namespace)
    return ns.agent if ns else namespace


def memory_health(queryset: QuerySet[LongTermMemory], *, embedder=None, conflicts=None,
                  duplicates=None) -> list[AgentHealth]:
    """Per agent of the items in ``queryset`` (one user's), sorted by agent. ``conflicts`` and
    ``duplicates``: the pairs when the caller has them (``review.conflict_pairs``,
    ``duplicates.duplicate_suggestions``)."""
    by_agent: dict[str, AgentHealth] = {}

    def get(namespace: str) -> AgentHealth:
        agent = _agent(namespace)
        return by_agent.setdefault(agent, AgentHealth(agent=agent))

    # Each item counted once, in its state as ``ltm.store.states`` defines it (a paused item is not current).
    now = timezone.now()
    for state, name in ((MemoryState.ACTIVE, "current"), (MemoryState.PAUSED, "paused"),
                        (MemoryState.SUPERSEDED, "superseded"), (MemoryState.PENDING_REVIEW, "pending")):
        for row in queryset.filter(state_q(state, now=now)).values("namespace").annotate(n=Count("pk")).order_by():
            health = get(row["namespace"])
            setattr(health, name, getattr(health, name) + row["n"])
    for pair in conflict_pairs(queryset) if conflicts is None else conflicts:
        get(pair.new.namespace).conflicts += 1
    for pair in duplicate_suggestions(queryset, embedder=embedder) if duplicates is None else duplicates:
        get(pair.keep.namespace).duplicates += 1
    counts = defaultdict(int)
    for namespace in expiring_soon(queryset, days=EXPIRING_SOON_DAYS).values_list("namespace", flat=True):
        counts[namespace] += 1
    for namespace, n in counts.items():
        get(namespace).expiring += n
    return sorted(by_agent.values(), key=lambda h: h.agent)
