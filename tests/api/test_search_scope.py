"""The search endpoint: an end user's pause flags and rules apply, other users' items never show."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

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
                          "attribute", "time", "type_weight", "decay", "redundancy", "someone_else", "final"}
    assert parts["final"] == explained[0]["score"] and parts["keyword"] > 0 and parts["type_weight"] == 1.0
    assert parts["gate"] == 1.0 and parts["time"] == 0.0


def test_explain_must_be_a_boolean(as_user, alice):
    response = as_user(alice).get("/api/v1/memories/search/?q=tea&explain=maybe")
    assert response.status_code == 400
    assert "explain" in response.json()["error"]["fields"]


# Repeated searches by a token, as an agent's chat loop makes them: the process keeps each scope's compiled
# SQL (memory_rank's scope_key), and every change of the scope still shows in the next search.


def _token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def _ids(client, query: str = "tea", **params) -> set[str]:
    response = client.get("/api/v1/memories/search/", {"q": query, "k": 100, **params})
    assert response.status_code == 200, response.content
    return {item["id"] for item in response.json()}


def test_repeated_token_searches_follow_writes_pauses_deletes_and_new_agents(alice, bob, make_memory):
    green = make_memory(alice, "Alice drinks green tea")
    black = make_memory(alice, "Alice drinks black tea")
    bobs = make_memory(bob, "Bob drinks green tea")
    as_alice, as_bob = _token_client(alice), _token_client(bob)
    assert _ids(as_alice) == {green.pk, black.pk}
    assert _ids(as_bob) == {bobs.pk}

    # Under an agent that no item of the table had yet: a namespace text the first search did not list.
    coder = make_memory(alice, "Alice drinks oolong tea while coding", agent="pair-programmer")
    assert _ids(as_alice) == {green.pk, black.pk, coder.pk}
    MemoryFlag.objects.create(memory_id=black.pk, paused=True)
    assert _ids(as_alice) == {green.pk, coder.pk}
    PauseRule.objects.create(user_id=str(alice.pk), agent_namespace="pair-programmer")
    assert _ids(as_alice) == {green.pk}
    assert as_alice.delete(f"/api/v1/memories/{green.pk}/").status_code == 204
    assert _ids(as_alice) == set()
    assert _ids(as_bob) == {bobs.pk}  # the same query text, the same process: never another user's items


def test_a_filtered_search_after_an_unfiltered_one_is_narrowed(alice, make_memory):
    chat = make_memory(alice, "Alice drinks green tea")
    coder = make_memory(alice, "Alice drinks tea while coding", agent="coder")
    client = _token_client(alice)
    assert _ids(client) == {chat.pk, coder.pk}
    assert _ids(client, agent="coder") == {coder.pk}
    assert _ids(client, type="PREFERENCE") == set()
    assert _ids(client) == {chat.pk, coder.pk}


def test_staff_searches_every_user_until_one_is_erased(support_user, alice, bob, make_memory):
    from memoryboard.ltm.people.user_data import user_data_erase

    alices, bobs = make_memory(alice, "Alice drinks green tea"), make_memory(bob, "Bob drinks green tea")
    staff = _token_client(support_user)
    assert _ids(staff) == {alices.pk, bobs.pk}
    user_data_erase(user_id=str(alice.pk), actor=support_user)
    assert _ids(staff) == {bobs.pk}
    assert _ids(_token_client(alice)) == set()


def test_a_revoked_token_is_refused_at_the_next_search(alice, make_memory):
    make_memory(alice, "Alice drinks green tea")
    client = _token_client(alice)
    assert len(_ids(client)) == 1
    Token.objects.filter(user=alice).delete()
    response = client.get("/api/v1/memories/search/", {"q": "tea"})
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("params,field", [({"q": "tea", "k": "ten"}, "k"), ({"q": "tea", "as_of": "yesterday"}, "as_of"),
                                          ({"q": "tea", "include_superseded": "perhaps"}, "include_superseded"),
                                          ({"q": "tea", "type": "MOOD"}, "type")])
def test_a_bad_search_parameter_is_a_400_naming_it(alice, params, field):
    response = _token_client(alice).get("/api/v1/memories/search/", params)
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]
