"""Retrieval receipts: each agent turn's retrievals, with what was considered, injected and left out."""

from __future__ import annotations

from memoryboard.ltm.search.results import Ranking
from memoryboard.models import RetrievalReceipt

# Candidates kept per receipt, best first (the counts cover them all).
RECEIPT_CANDIDATES = 50


def receipt_build(*, ranking: Ranking, agent_id: str, user_id: str, conversation_id: str, kind: str) -> RetrievalReceipt:
    """An unsaved receipt of ``ranking`` (the context window viewer shows one without saving it)."""
    return RetrievalReceipt(
        agent_id=agent_id,
        user_id=str(user_id),
        conversation_id=conversation_id or "",
        kind=kind,
        query=ranking.query,
        k=ranking.k,
        model_name=ranking.model,
        min_relevance=ranking.min_relevance,
        index=ranking.index,
        counts=ranking.summary(),
        candidates=[candidate.as_dict() for candidate in ranking.top_candidates(RECEIPT_CANDIDATES)],
    )


def receipt_record(*, ranking: Ranking, agent_id: str, user_id: str, conversation_id: str, kind: str) -> RetrievalReceipt:
    """Store the receipt of one retrieval of an agent turn (in the turn's transaction)."""
    receipt = receipt_build(ranking=ranking, agent_id=agent_id, user_id=user_id,
                            conversation_id=conversation_id, kind=kind)
    receipt.save()
    return receipt


# Recent receipts of the item's user scanned for its score parts (one indexed query, newest first).
RECEIPTS_SCANNED_PER_ITEM = 50


def receipts_for_memory(*, memory, limit: int = RECEIPTS_SCANNED_PER_ITEM) -> list[tuple[RetrievalReceipt, dict]]:
    """``(receipt, candidate row)`` for the user's ``limit`` most recent receipts that considered ``memory``.

    One query on ``idx_receipt_user``; the candidate row carries the score parts and ``label``
    (the outcome in words).
    """
    if not memory.user_id:
        return []
    found = []
    for receipt in RetrievalReceipt.objects.filter(user_id=str(memory.user_id))[:limit]:
        row = next((c for c in receipt.candidate_rows() if c.get("id") == str(memory.pk)), None)
        if row is not None:
            found.append((receipt, row))
    return found
