"""The offline reconcile decision on phrasings its cue lists and the development set never spelled out: a
return to an earlier value, a value said to continue."""

from __future__ import annotations

import pytest

from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import LongTermMemory
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db


def save(user, content):
    namespace = build_namespace(agent_namespace="chat", user_id=str(user.pk))
    return memory_save_reconciled(namespace=namespace, content=content, memory_type="FACT", agent_id="chat")


def current(user):
    namespace = build_namespace(agent_namespace="chat", user_id=str(user.pk))
    return sorted(m.content for m in LongTermMemory.objects.filter(namespace=namespace.as_text(), archived=False))


@pytest.mark.parametrize("first,later", [
    ("I am vegetarian", "I have started eating meat again"),
])
def test_a_return_to_an_earlier_value_replaces_the_stored_one(alice, use_embedder, first, later):
    old = save(alice, first).memory
    result = save(alice, later)
    assert result.decision.verdict == "update", result.decision.reason
    assert result.superseded == [old.pk]
    assert current(alice) == [later]


def test_continuing_is_said_as_still_true(alice, use_embedder):
    old = save(alice, "I have high blood pressure").memory
    result = save(alice, "the doctor says I should continue the pills")
    assert result.decision.verdict == "same", result.decision.reason
    assert result.memory.pk == old.pk and current(alice) == ["I have high blood pressure"]
