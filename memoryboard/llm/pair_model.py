"""The pair model: how a new statement relates to one stored item (the same fact again, a change of it, or
something else), learned from written examples instead of constants.

A small neural network (one hidden layer of rectified units, a softmax over ``same``, ``update`` and
``new``) over one input per pair (``ltm.write.reconcile_offline.pair_features``): the offline rules'
readings as numbers (cosines, nearest attributes, shared value words, cues of change, addition, past and
continuation, who it is about, the rules' own verdict) and the shipped encoder's two vectors (their product
and distance per dimension). The weights ship in ``pair_model.npz``, written by
``training/train_pair_model.py`` from the examples written for it (``training/reconcile_examples/``), never
from the development or the blind set; nothing is trained in a request.

numpy only; nothing here imports Django.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

WEIGHTS_FILE = Path(__file__).with_name("pair_model.npz")
ENCODER = "use-multilingual-v3"
CLASSES = ("same", "update", "new")
# Standardised inputs are clipped to this many standard deviations: a short clean sentence sits far nearer its
# attribute's prototype than the written examples did, and an input 20 deviations out swung the verdict.
CLIP = 4.0


def standardised(features: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The network's input: each feature standardised and clipped to ±:data:`CLIP` (training uses it too)."""
    return np.clip((np.asarray(features, dtype=np.float64) - mean) / scale, -CLIP, CLIP)


class PairModelError(RuntimeError):
    """The weights file is missing or does not fit the code (another number of inputs, another encoder)."""


@dataclass(frozen=True)
class PairModel:
    mean: np.ndarray  # (d,): the inputs are standardised first
    scale: np.ndarray  # (d,)
    hidden_weights: np.ndarray  # (d, h)
    hidden_bias: np.ndarray  # (h,)
    out_weights: np.ndarray  # (h, 3), one column per class of CLASSES
    out_bias: np.ndarray  # (3,)
    info: dict

    def class_probabilities(self, features: np.ndarray) -> np.ndarray:
        """``(n, 3)``: each row's probabilities of :data:`CLASSES`."""
        x = standardised(np.reshape(features, (-1, len(self.mean))), self.mean, self.scale)
        hidden = np.maximum(x @ self.hidden_weights + self.hidden_bias, 0.0)
        logits = hidden @ self.out_weights + self.out_bias
        logits -= logits.max(axis=1, keepdims=True)
        odds = np.exp(logits)
        return odds / odds.sum(axis=1, keepdims=True)

    def probabilities(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(p_update, p_same)`` of each row (one pair per row)."""
        p = self.class_probabilities(features)
        return p[:, CLASSES.index("update")], p[:, CLASSES.index("same")]

    def save(self, path: Path = WEIGHTS_FILE) -> None:
        info = {**self.info, "encoder": ENCODER, "inputs": int(len(self.mean)), "classes": list(CLASSES)}
        np.savez_compressed(path, mean=self.mean.astype(np.float32), scale=self.scale.astype(np.float32),
                            hidden_weights=self.hidden_weights.astype(np.float32),
                            hidden_bias=self.hidden_bias.astype(np.float32),
                            out_weights=self.out_weights.astype(np.float32), out_bias=self.out_bias.astype(np.float32),
                            info=np.array(json.dumps(info, ensure_ascii=False)))

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> PairModel:
        """Read a weights file written by :meth:`save`.

        Raises:
            PairModelError: missing, unreadable, or made for another encoder.
        """
        try:
            with np.load(path) as data:
                info = json.loads(str(data["info"]))
                model = cls(**{key: data[key].astype(np.float64) for key in (
                    "mean", "scale", "hidden_weights", "hidden_bias", "out_weights", "out_bias")}, info=info)
        except (OSError, KeyError, ValueError) as exc:
            raise PairModelError(f"cannot read the pair model {path}: {exc}") from exc
        if info.get("encoder") != ENCODER or info.get("classes") != list(CLASSES):
            raise PairModelError(f"{path} was trained for the encoder {info.get('encoder')!r} and the classes "
                                 f"{info.get('classes')}, not {ENCODER!r} and {list(CLASSES)}")
        return model


@lru_cache(maxsize=1)
def pair_model() -> PairModel:
    """The shipped pair model (read once per process)."""
    return PairModel.load()
