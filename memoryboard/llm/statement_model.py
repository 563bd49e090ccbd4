"""The statement classifier: does a clause state lasting information about the person, and of which type.

Two small regularised logistic regressions over the same features: the clause's vector from the
multilingual encoder the product ships (USE, 512 dimensions, Chinese and English in one space) and the
grammatical cues of :mod:`memoryboard.llm.cues` (question, request, greeting, hypothetical, who speaks, …).
One decides keep / skip (``keep_probability`` against ``threshold``), four one-vs-rest ones the type
(FACT, PREFERENCE, PROCEDURE, EPISODE). Their weights ship in ``statement_model.npz`` (about 20 KB),
written by ``training/train_statement_model.py`` from the development set's clauses and examples written
for it (never from the blind set); nothing is trained in a request.

numpy only; nothing here imports Django.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from memoryboard.llm.cues import CUE_NAMES

WEIGHTS_FILE = Path(__file__).with_name("statement_model.npz")
ENCODER = "use-multilingual-v3"
TYPES: tuple[str, ...] = ("FACT", "PREFERENCE", "PROCEDURE", "EPISODE")
# A cue counts as much as a typical vector component times this (the vector is of unit length, its
# components about 0.04): the regularisation then weighs cues and vector alike.
CUE_SCALE = 0.25


class StatementModelError(RuntimeError):
    """The weights file is missing or does not fit the code (other cues, another encoder)."""


def feature_matrix(vectors: np.ndarray, cues: np.ndarray) -> np.ndarray:
    """The classifier's input: the encoder's vectors and the cues (scaled), one row per clause."""
    vectors = np.asarray(vectors, dtype=np.float64)
    cues = np.asarray(cues, dtype=np.float64).reshape(len(vectors), len(CUE_NAMES))
    return np.hstack([vectors, cues * CUE_SCALE])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -35, 35)))


def fit_logistic(
    features: np.ndarray, labels: np.ndarray, *, l2: float, sample_weight: np.ndarray | None = None,
    iterations: int = 30,
) -> tuple[np.ndarray, float]:
    """A binary logistic regression with an L2 penalty on the weights (not the bias), by Newton's method.

    Args:
        features: ``(n, d)``.
        labels: ``(n,)`` of 0 and 1.
        l2: the penalty (λ/2 ‖w‖²) against the weighted log-loss summed over the rows.
        sample_weight: ``(n,)``, default 1 each.

    Returns:
        ``(weights (d,), bias)``.
    """
    x = np.hstack([np.asarray(features, dtype=np.float64), np.ones((len(features), 1))])
    y = np.asarray(labels, dtype=np.float64)
    s = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    penalty = np.full(x.shape[1], float(l2))
    penalty[-1] = 1e-6
    w = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = _sigmoid(x @ w)
        gradient = x.T @ (s * (p - y)) + penalty * w
        hessian = (x * (s * p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w[:-1], float(w[-1])


@dataclass(frozen=True)
class StatementModel:
    """The keep/skip and type weights (see the module docstring)."""

    keep_weights: np.ndarray
    keep_bias: float
    threshold: float
    type_weights: np.ndarray  # (len(TYPES), d)
    type_bias: np.ndarray  # (len(TYPES),)
    info: dict

    def keep_probability(self, features: np.ndarray) -> np.ndarray:
        """The probability that each row's clause states lasting information about the person."""
        return _sigmoid(np.asarray(features, dtype=np.float64) @ self.keep_weights + self.keep_bias)

    def keeps(self, features: np.ndarray) -> np.ndarray:
        """Boolean per row: kept (probability at least ``threshold``)."""
        return self.keep_probability(features) >= self.threshold

    def types(self, features: np.ndarray) -> list[str]:
        """The most likely type of each row's clause."""
        if not len(features):
            return []
        scores = np.asarray(features, dtype=np.float64) @ self.type_weights.T + self.type_bias
        return [TYPES[i] for i in scores.argmax(axis=1)]

    def save(self, path: Path) -> None:
        """Write the weights (float32) and ``info`` (JSON) to ``path`` (``.npz``)."""
        info = {**self.info, "cues": list(CUE_NAMES), "encoder": ENCODER, "types": list(TYPES), "cue_scale": CUE_SCALE}
        np.savez_compressed(
            path, keep_weights=self.keep_weights.astype(np.float32), keep_bias=np.float32(self.keep_bias),
            threshold=np.float32(self.threshold), type_weights=self.type_weights.astype(np.float32),
            type_bias=self.type_bias.astype(np.float32), info=np.array(json.dumps(info, ensure_ascii=False)),
        )

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> StatementModel:
        """Read a weights file written by :meth:`save`.

        Raises:
            StatementModelError: missing, unreadable, or made for other cues, another encoder or scale.
        """
        try:
            with np.load(path) as data:
                info = json.loads(str(data["info"]))
                model = cls(
                    keep_weights=data["keep_weights"].astype(np.float64), keep_bias=float(data["keep_bias"]),
                    threshold=float(data["threshold"]), type_weights=data["type_weights"].astype(np.float64),
                    type_bias=data["type_bias"].astype(np.float64), info=info,
                )
        except (OSError, KeyError, ValueError) as exc:
            raise StatementModelError(f"cannot read the statement model {path}: {exc}") from exc
        expected = {"cues": list(CUE_NAMES), "encoder": ENCODER, "types": list(TYPES), "cue_scale": CUE_SCALE}
        for key, value in expected.items():
            if info.get(key) != value:
                raise StatementModelError(
                    f"{path} was trained with {key}={info.get(key)!r}, the code has {value!r}: "
                    "run training/train_statement_model.py")
        return model


def fit_statement_model(
    keep_features: np.ndarray, keep_labels: Sequence[int], type_features: np.ndarray, type_labels: Sequence[str], *,
    l2: float, type_l2: float, threshold: float, keep_weight: np.ndarray | None = None, info: dict | None = None,
) -> StatementModel:
    """Fit both parts: keep/skip on (``keep_features``, ``keep_labels``), the types one-vs-rest on
    (``type_features``, ``type_labels``)."""
    weights, bias = fit_logistic(keep_features, np.asarray(keep_labels), l2=l2, sample_weight=keep_weight)
    type_weights, type_bias = [], []
    for kind in TYPES:
        w, b = fit_logistic(type_features, np.array([label == kind for label in type_labels], dtype=float), l2=type_l2)
        type_weights.append(w)
        type_bias.append(b)
    return StatementModel(keep_weights=weights, keep_bias=bias, threshold=threshold,
                          type_weights=np.vstack(type_weights), type_bias=np.array(type_bias), info=dict(info or {}))


@lru_cache(maxsize=1)
def shipped_statement_model() -> StatementModel:
    """The model shipped with the package (``statement_model.npz``), read once per process."""
    return StatementModel.load(WEIGHTS_FILE)
