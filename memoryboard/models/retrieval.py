"""Retrieval receipts: what one agent turn's memory retrieval considered, injected and left out."""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class RetrievalReceipt(models.Model):
    """One retrieval of an agent turn (session-start injection or a ``memory_search`` tool call).

    ``candidates`` holds the best ``RECEIPT_CANDIDATES`` candidates, best first, each
    ``{"id", "outcome", "cosine", "semantic", "keyword", "match", "type_weight", "decay", "final"}``
    (outcome: returned, paused, expired, below_threshold, beyond_k, no_vector); ``counts`` counts every
    candidate by outcome.
    """

    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    agent_id = models.CharField(_("agent"), max_length=255)
    user_id = models.CharField(_("user"), max_length=255)
    conversation_id = models.CharField(_("conversation"), max_length=255, blank=True)
    kind = models.CharField(_("kind"), max_length=16)
    query = models.TextField(_("query"))
    k = models.PositiveIntegerField()
    model_name = models.CharField(_("embedding model"), max_length=100)
    min_relevance = models.FloatField(_("minimum relevance"))
    index = models.CharField(_("index"), max_length=16, default="exact")
    counts = models.JSONField(_("counts"), default=dict)
    candidates = models.JSONField(_("candidates"), default=list)

    class Meta:
        db_table = "memoryboard_retrieval_receipt"
        verbose_name = _("retrieval receipt")
        verbose_name_plural = _("retrieval receipts")
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["conversation_id", "created_at"], name="idx_receipt_conversation"),
            models.Index(fields=["user_id", "created_at"], name="idx_receipt_user"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} / {self.user_id}: {self.query[:60]}"

    def count_labels(self) -> list[tuple[str, int]]:
        """``(outcome in words, count)`` for display."""
        return [(OUTCOME_LABELS.get(outcome, outcome), n) for outcome, n in (self.counts or {}).items()]

    def candidate_rows(self) -> list[dict]:
        """The candidates with their outcome in words (``label``) for display."""
        return [{**c, "label": OUTCOME_LABELS.get(c.get("outcome"), c.get("outcome"))} for c in self.candidates or []]

    @property
    def index_label(self) -> str:
        return str(INDEX_LABELS.get(self.index, self.index))


OUTCOME_LABELS = {
    "returned": _("returned"),
    "paused": _("paused"),
    "below_threshold": _("below the minimum relevance"),
    "beyond_k": _("beyond the top K"),
    "no_vector": _("no vector yet"),
    "expired": _("expired"),
}
INDEX_LABELS = {"exact": _("exact search"), "hnsw": _("HNSW index")}
