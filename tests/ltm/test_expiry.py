"""Expiry: expires_at on an item, ttl-days per agent and type, refresh-on-read, never retrieved, archived by cleanup."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from memoryboard.agents_config import AgentConfigError, parse_agents_config, reset_agents_config
from memoryboard.ltm.store.expiry import expiring_soon, memory_set_expiry
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.search.retrieval import memory_retrieve, memory_retrieve_ranking
from memoryboard.ltm.store.items import MemoryError
from memoryboard.ltm.write.items import memory_create
from memoryboard.ltm.store.states import memory_state
from memoryboard.ltm.write.tools import run_memory_tool
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryStateChange

pytestmark = pytest.mark.django_db

AGENTS = """
agent:
  agents:
    chat:
      memory-tools: true
      long-term-memory: {enabled: true, namespace: chat, ttl-days: {EPISODE: 30}, refresh-on-read: true}
    notes:
      long-term-memory: {enabled: true, namespace: notes, ttl-days: 10}
"""


@pytest.fixture
def agents(settings, tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS)
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield
    reset_agents_config()


def _create(user, content, *, memory_type="FACT", agent="chat", **extra):
    return memory_create(namespace=build_namespace(agent_namespace=agent, user_id=str(user.pk)), content=content,
                         memory_type=memory_type, agent_id=agent, **extra)


def _search(user, query, agent="chat"):
    ns = build_namespace(agent_namespace=agent, user_id=str(user.pk))
    return [item.memory.content for item in memory_retrieve(namespace=ns, query=query, k=5, agent_id=agent)]


def test_ttl_days_per_type_and_per_agent(agents, alice):
    now = timezone.now()
    episode = _create(alice, "User went to the dentist today", memory_type="EPISODE")
    fact = _create(alice, "User is a Rust developer")
    note = _create(alice, "User likes tea", agent="notes", memory_type="PREFERENCE")
    assert abs(episode.expires_at - (now + timedelta(days=30))) < timedelta(minutes=1)
    assert fact.expires_at is None  # chat gives FACT no TTL
    assert abs(note.expires_at - (now + timedelta(days=10))) < timedelta(minutes=1)
    assert episode.value_json["expiresAt"].endswith("Z")


@pytest.mark.parametrize("section, key", [
    ({"ttl-days": 0}, "agent.agents.a.long-term-memory.ttl-days"),
    ({"ttl-days": {"OPINION": 3}}, "agent.agents.a.long-term-memory.ttl-days.OPINION"),
    ({"ttl-days": {"EPISODE": "soon"}}, "agent.agents.a.long-term-memory.ttl-days.EPISODE"),
    ({"refresh-on-read": "yes"}, "agent.agents.a.long-term-memory.refresh-on-read"),
    ({"memory-review": "sometimes"}, "agent.agents.a.long-term-memory.memory-review"),
])
def test_bad_expiry_or_review_settings_name_the_key(section, key):
    with pytest.raises(AgentConfigError) as exc:
        parse_agents_config({"agent": {"agents": {"a": {"long-term-memory": section}}}})
    assert exc.value.key == key


def test_system_check_reports_a_bad_ttl(settings, tmp_path):
    from memoryboard.checks import check_agents_config

    path = tmp_path / "agents.yaml"
    path.write_text("agent:\n  agents:\n    a: {long-term-memory: {ttl-days: {FACT: -1}}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    errors = check_agents_config()
    assert errors and "ttl-days.FACT" in errors[0].msg and errors[0].id == "memoryboard.E001"


def test_expired_items_are_never_retrieved_and_the_read_archives_them_at_once(agents, alice):
    shanghai = _create(alice, "User lives in Shanghai", expires_at=timezone.now() - timedelta(hours=1))
    _create(alice, "User lives in Berlin", expires_at=timezone.now() + timedelta(days=3))
    assert not LongTermMemory.objects.get(pk=shanghai.pk).archived  # the sweep has not come by yet
    assert memory_state(shanghai) == "expired"  # but it is not current
    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    ranking = memory_retrieve_ranking(namespace=ns, query="Where does the user live?", k=5, log_access=False)
    assert ranking.summary().get("expired") == 1 and [r.memory.content for r in ranking.results] == ["User lives in Berlin"]
    shanghai.refresh_from_db()
    assert shanghai.archived and shanghai.archived_reason == ArchivedReason.EXPIRED  # the read met it: archived
    assert MemoryStateChange.objects.get(memory_id=shanghai.pk).new_state == "expired"
    assert _search(alice, "Where does the user live?") == ["User lives in Berlin"]


def test_refresh_on_read_pushes_the_expiry_forward(agents, alice):
    item = _create(alice, "User is travelling in Japan this month", memory_type="EPISODE")
    soon = timezone.now() + timedelta(days=2)
    LongTermMemory.objects.filter(pk=item.pk).update(
        value_json={**item.value_json, "expiresAt": soon.strftime("%Y-%m-%dT%H:%M:%SZ")})
    assert _search(alice, "Where is the user travelling?") == [item.content]
    refreshed = LongTermMemory.objects.get(pk=item.pk).expires_at
    assert refreshed > timezone.now() + timedelta(days=29)


def test_no_refresh_without_refresh_on_read(agents, alice):
    item = _create(alice, "User keeps notes in Markdown", agent="notes")
    LongTermMemory.objects.filter(pk=item.pk).update(
        value_json={**item.value_json, "expiresAt": (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")})
    assert _search(alice, "How does the user keep notes?", agent="notes") == [item.content]
    assert LongTermMemory.objects.get(pk=item.pk).expires_at < timezone.now() + timedelta(days=2)


def test_cleanup_archives_expired_items_as_expired(agents, alice):
    gone = _create(alice, "User has a job interview tomorrow", expires_at=timezone.now() - timedelta(minutes=5))
    kept = _create(alice, "User is a Rust developer")
    out = StringIO()
    call_command("memory_cleanup", stdout=out)
    assert "Would archive 1 expired item(s)" in out.getvalue()
    assert not LongTermMemory.objects.get(pk=gone.pk).archived  # dry run
    call_command("memory_cleanup", "--apply", stdout=StringIO())
    gone.refresh_from_db()
    assert gone.archived and gone.archived_reason == ArchivedReason.EXPIRED
    assert memory_state(gone) == "expired"
    assert MemoryStateChange.objects.get(memory_id=gone.pk).new_state == "expired"
    assert not LongTermMemory.objects.get(pk=kept.pk).archived


def test_set_expiry_is_audited_and_validated(agents, alice):
    item = _create(alice, "User is a Rust developer")
    memory_set_expiry(memory=item, actor=alice, expires_at="2031-01-02")
    assert LongTermMemory.objects.get(pk=item.pk).value_json["expiresAt"] == "2031-01-02T00:00:00Z"
    memory_set_expiry(memory=item, actor=alice, expires_at=None)
    assert "expiresAt" not in LongTermMemory.objects.get(pk=item.pk).value_json
    with pytest.raises(MemoryError) as exc:
        memory_set_expiry(memory=item, actor=alice, expires_at="next tuesday")
    assert exc.value.field == "expires_at"


def test_the_memory_tool_saves_an_expiry(agents, alice):
    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    result = run_memory_tool(name="memory_save", namespace=ns, agent_id="chat",
                             arguments={"content": "User's flight is on Friday", "type": "EPISODE",
                                        "expires_at": "2030-05-01T10:00:00Z"})
    assert result["saved"] and result["expires_at"] == "2030-05-01T10:00:00Z"
    bad = run_memory_tool(name="memory_save", namespace=ns, agent_id="chat",
                          arguments={"content": "User's train is on Monday", "type": "EPISODE", "expires_at": "soon"})
    assert bad["saved"] is False and bad["field"] == "expires_at"


def test_expiring_soon(agents, alice):
    soon = _create(alice, "User has a deadline on Monday", expires_at=timezone.now() + timedelta(days=2))
    _create(alice, "User has a holiday next year", expires_at=timezone.now() + timedelta(days=200))
    _create(alice, "User is a Rust developer")
    assert list(expiring_soon(LongTermMemory.objects.all(), days=7).values_list("pk", flat=True)) == [soon.pk]


def test_api_patch_sets_and_clears_the_expiry(agents, alice, client):
    item = _create(alice, "User is a Rust developer")
    client.force_login(alice)
    url = f"/api/v1/memories/{item.pk}/"
    response = client.patch(url, {"expires_at": "2031-01-02T03:04:05Z"}, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["expires_at"] == "2031-01-02T03:04:05Z"
    response = client.patch(url, {"expires_at": "not a date"}, content_type="application/json")
    assert response.status_code == 400 and "expires_at" in response.json()["error"]["fields"]
    response = client.patch(url, {"expires_at": None}, content_type="application/json")
    assert response.status_code == 200 and response.json()["expires_at"] is None


def test_an_expired_best_match_does_not_take_a_place_in_the_top_k(agents, alice):
    _create(alice, "User lives in Shanghai", expires_at=timezone.now() - timedelta(days=1))
    _create(alice, "User lives in Shanghai, China", expires_at=timezone.now() - timedelta(days=1))
    _create(alice, "User lives in Berlin")
    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    found = memory_retrieve(namespace=ns, query="User lives in Shanghai", k=1, agent_id="chat")
    assert [item.memory.content for item in found] == ["User lives in Berlin"]
