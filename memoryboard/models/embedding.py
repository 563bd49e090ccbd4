from __future__ import annotations

import hashlib

import numpy as np
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class MemoryEmbedding(models.Model):
    """The vector of one memory under one embedding model (float32 bytes).

    Kept apart from the shared table so vectors can be rebuilt for another model.
    No database constraint to the shared table: the platform may delete rows itself.
    ``checksum`` names the vector bytes (see :func:`vector_checksum`); it sits in an index with the
    item and model, so a search reads which vectors its candidates have without touching the rows,
    and finds what it built for them in ``ltm.search.vector_cache`` (keyed by the checksums).
    """

    memory = models.ForeignKey(
        "memoryboard.LongTermMemory",
        on_delete=models.CASCADE,
        db_constraint=False,
        related_name="embeddings",
    )
    model_name = models.CharField(max_length=100)
    dim = models.PositiveIntegerField()
    vector = models.BinaryField()
    checksum = models.BigIntegerField()
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_embedding"
        verbose_name = _("memory vector")
        verbose_name_plural = _("memory vectors")
        constraints = [
            models.UniqueConstraint(fields=["memory", "model_name"], name="uniq_embedding_memory_model"),
        ]
        indexes = [
            models.Index(fields=["memory", "model_name", "checksum"], name="idx_embedding_checksum"),
        ]

    def as_array(self) -> np.ndarray:
        return np.frombuffer(self.vector, dtype=np.float32)


def vector_checksum(vector: bytes) -> int:
    """A signed 64-bit BLAKE2b digest of the vector bytes: equal bytes, equal checksum."""
    return int.from_bytes(hashlib.blake2b(vector, digest_size=8).digest(), "big", signed=True)


class AnnChange(models.Model):
    """One change of the HNSW indexes (``ltm.search.ann``): an append-only log every host follows, never consumed.

    Written in the transaction that changes an item's vector or state (a new or re-embedded vector, an
    archive, a delete, a restore, an erase) while the model is indexed somewhere (the log has a row of the
    model). Each host's index file records the last ``id`` (``seq``) it applied in a position file beside
    it and applies the rows past it: the database stays the one source of truth, the files follow it.
    ``op`` says what the writer meant; applying re-reads the item's current vector and state, so the order
    of rows of one item does not matter. ``remove`` rows carry the vector's row id (the key), which is all
    that is left once the item is erased. ``build`` marks a model as indexed; ``pruned`` (model blank) says
    the log was pruned through ``embedding_id``: a host behind that rebuilds. Ids only, no content.
    """

    class Op(models.TextChoices):
        ADD = "add", _("add")
        REMOVE = "remove", _("remove")
        BUILD = "build", _("build")
        PRUNED = "pruned", _("pruned")

    model_name = models.CharField(max_length=100, blank=True)
    memory_id = models.CharField(max_length=255, blank=True)
    embedding_id = models.BigIntegerField(null=True, blank=True)
    op = models.CharField(max_length=8, choices=Op.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_ann_change"
        verbose_name = _("index change")
        verbose_name_plural = _("index changes")
        indexes = [
            models.Index(fields=["model_name", "id"], name="idx_ann_change_model"),
            models.Index(fields=["created_at"], name="idx_ann_change_created"),
        ]
