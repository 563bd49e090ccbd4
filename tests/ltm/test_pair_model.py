"""The offline reconcile's pair model (``llm.pair_model``): what the rules alone got wrong on words they never
listed, and what the model must never do."""

from __future__ import annotations

import numpy as np
import pytest

from memoryboard.llm.embeddings import UniversalSentenceEncoder
from memoryboard.llm.pair_model import CLASSES, pair_model
from memoryboard.ltm.write.reconcile import offline_decision
from memoryboard.ltm.write.reconcile_offline import compared
from tests.ltm.test_reconcile_generalizes import current, save, save_as_update

pytestmark = pytest.mark.django_db


def test_the_shipped_weights_fit_the_pair_inputs(use_embedder):
    encoder = UniversalSentenceEncoder()
    (_pk, _cosine, _relation, features), = compared("I moved to Ghent.", [("a", "I live in Graz.", 0.0)],
                                                    encode=encoder.embed, encoder_name=encoder.name, inputs="every")
    model = pair_model()
    assert features.shape == (len(model.mean),)
    p = model.class_probabilities(features)
    assert p.shape == (1, len(CLASSES)) and np.isclose(p.sum(), 1.0)


def test_another_amount_for_the_same_thing_replaces_it(alice, use_embedder):
    # The rules read the shared words (rent, euros) as a repeat.
    save_as_update(alice, "My rent is 1,450 euros a month.", "rent went up to 1,620 euros from January, ugh")


def test_a_child_a_year_older_replaces_the_age(alice, use_embedder):
    # The rules never replace a fact about someone else on a guess; both are about the user's daughter.
    save_as_update(alice, "My daughter is 6.", "my daughter turned seven on sunday!")


def test_a_change_far_in_meaning_never_retires_an_unrelated_item(alice, use_embedder):
    # Far from its examples the model gives this pair a change (0.9): only items close in meaning or sharing a
    # value word are its to change.
    save(alice, "I bought a 日语.")
    result = save(alice, "现在在阿里巴巴上班")
    assert result.decision.verdict == "new" and not result.superseded
    assert current(alice) == sorted(["I bought a 日语.", "现在在阿里巴巴上班"])


def test_an_addition_stays_one_more_fact(use_embedder):
    decision = offline_decision("we also got a puppy, Bean", [("a", "I have a cat called Mochi.", 0.5)])
    assert decision.verdict == "new", decision.reason
