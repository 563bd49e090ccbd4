"""The search endpoint: an end user's pause flags and rules apply, other users' items never show."""

from __future__ import annotations

import pytest

from memoryboard.models import MemoryFlag, PauseRule

pytestmark = pytest.mark.django_db


def test_end_user_search_skips_paused_items_and_other_users(as_user, alice, bob, make_memory):
    kept = make_memory(alice, "Alice drinks green tea")
    flagged = make_memory(alice, "Alice drinks black tea")
    ruled = make_memory(alice, "Alice prefers tea to coffee", memory_type="PREFERENCE")
    make_memory(bob, "Bob drinks green tea")
    MemoryFlag.objects.create(memory_id=flagged.pk, paused=True)
    PauseRule.objects.create(user_id=str(alice.pk), agent_namespace="chat", memory_type="PREFERENCE")
    PauseRule.objects.create(user_id=str(bob.pk), agent_namespace="chat", memory_type="FACT")  # not Alice's

    results = as_user(alice).get("/api/v1/memories/search/?q=green tea&k=10").json()

    assert [item["id"] for item in results] == [kept.pk]
    assert ruled.pk not in {item["id"] for item in results}
    MemoryFlag.objects.filter(memory_id=flagged.pk).update(paused=False)
    results = as_user(alice).get("/api/v1/memories/search/?q=tea&k=10").json()
    assert {item["id"] for item in results} == {kept.pk, flagged.pk}


def test_explain_gives_the_score_parts_and_unrelated_items_rank_last(as_user, alice, make_memory):
    from memoryboard.ltm.search.ranking import MIN_RELEVANCE

    tea = make_memory(alice, "Alice drinks green tea")
    berlin = make_memory(alice, "Alice flies to Berlin on Monday", memory_type="EPISODE")
    plain = as_user(alice).get("/api/v1/memories/search/?q=green tea").json()
    # A search returns the k best (no minimum relevance: docs/retrieval.md § Fusion), the unrelated last.
    assert [item["id"] for item in plain] == [tea.pk, berlin.pk] and "explain" not in plain[0]
    assert plain[0]["score"] > plain[1]["score"]
    explained = as_user(alice).get("/api/v1/memories/search/?q=green tea&explain=true").json()
    assert explained[1]["explain"]["relevance"] < MIN_RELEVANCE <= explained[0]["explain"]["relevance"]
    parts = explained[0]["explain"]
    assert set(parts) == {"cosine", "centrality", "semantic", "keyword", "keyword_z", "gate", "match", "relevance",
                          "time", "type_weight", "decay", "redundancy", "final"}
    assert parts["final"] == explained[0]["score"] and parts["keyword"] > 0 and parts["type_weight"] == 1.0
    assert parts["gate"] == 1.0 and parts["time"] == 0.0


def test_explain_must_be_a_boolean(as_user, alice):
    response = as_user(alice).get("/api/v1/memories/search/?q=tea&explain=maybe")
    assert response.status_code == 400
    assert "explain" in response.json()["error"]["fields"]
