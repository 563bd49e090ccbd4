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
    and finds what it built for them in ``ltm.vector_cache`` (keyed by the checksums).
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


class AnnPending(models.Model):
    """An item whose vector of ``model_name`` the HNSW index (``ltm.ann``) has not taken in yet.

    Written in the transaction that changes the item (a new vector, archived, restored), only while the
    model has an index file; the worker task takes every row of the model at once, applies them and saves
    the file once, then deletes the rows it read. Many writes queued before a task runs thus cost one
    rewrite of the file, not one each. ``memory_id`` is no foreign key: a row outlives its item.
    """

    model_name = models.CharField(max_length=100)
    memory_id = models.CharField(max_length=255)

    class Meta:
        db_table = "memoryboard_ann_pending"
        verbose_name = _("pending index update")
        verbose_name_plural = _("pending index updates")
        indexes = [models.Index(fields=["model_name", "id"], name="idx_ann_pending_model")]
