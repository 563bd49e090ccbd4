from __future__ import annotations

import numpy as np
from django.db import models
from django.utils import timezone


class MemoryEmbedding(models.Model):
    """The vector of one memory under one embedding model (float32 bytes).

    Kept apart from the shared table so vectors can be rebuilt for another model.
    No database constraint to the shared table: the platform may delete rows itself.
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
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_embedding"
        constraints = [
            models.UniqueConstraint(fields=["memory", "model_name"], name="uniq_embedding_memory_model"),
        ]

    def as_array(self) -> np.ndarray:
        return np.frombuffer(self.vector, dtype=np.float32)
