"""GET /api/v1/memories/{id}/history/ and POST /api/v1/memories/{id}/revert/: shapes, permissions, errors."""

from __future__ import annotations

import pytest

from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory, MemoryVersion
from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db


def _edited(as_user, user, make_memory):
    memory = make_memory(user, "User lives in Shanghai")
    response = as_user(user).patch(f"/api/v1/memories/{memory.pk}/", {"content": "User lives in Berlin"}, format="json")
    assert response.status_code == 200, response.content
    return memory


def test_history_lists_versions_oldest_first(as_user, bob_named, make_memory):
    memory = _edited(as_user, bob_named, make_memory)
    response = as_user(bob_named).get(f"/api/v1/memories/{memory.pk}/history/")
    assert response.status_code == 200
    body = response.json()
    assert [v["version"] for v in body] == [1, 2]
    assert body[0]["before"] is None and body[0]["after"] == {"content": "User lives in Shanghai", "type": "FACT"}
    assert body[1]["event"] == "edit" and body[1]["who"] == "Bob Builder"
    assert body[1]["before"]["content"] == "User lives in Shanghai"
    assert body[1]["after"]["content"] == "User lives in Berlin"
    assert set(body[1]) == {"version", "event", "who", "when", "why", "before", "after"}


def test_revert_makes_a_new_version(as_user, alice, make_memory):
    memory = _edited(as_user, alice, make_memory)
    response = as_user(alice).post(f"/api/v1/memories/{memory.pk}/revert/", {"version": 1}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["content"] == "User lives in Shanghai"
    history = as_user(alice).get(f"/api/v1/memories/{memory.pk}/history/").json()
    assert [(v["version"], v["event"]) for v in history] == [(1, "create"), (2, "edit"), (3, "revert")]
    assert AuditLog.objects.filter(object_id=memory.pk, reason="revert", details__version=1).exists()


@pytest.mark.parametrize("body", [{"version": 9}, {"version": 0}, {"version": "two"}, {}, {"version": 1, "x": 1}])
def test_revert_bad_version_is_400_naming_it(as_user, alice, make_memory, body):
    memory = _edited(as_user, alice, make_memory)
    response = as_user(alice).post(f"/api/v1/memories/{memory.pk}/revert/", body, format="json")
    assert response.status_code == 400
    fields = error_of(response)["fields"]
    assert ("x" if "x" in body else "version") in fields
    assert LongTermMemory.objects.get(pk=memory.pk).content == "User lives in Berlin"
    assert MemoryVersion.objects.filter(memory_id=memory.pk).count() == 2


def test_an_end_user_never_reads_or_reverts_another_users_item(as_user, alice, bob, make_memory):
    memory = _edited(as_user, alice, make_memory)
    client = as_user(bob)
    assert client.get(f"/api/v1/memories/{memory.pk}/history/").status_code == 404
    assert client.post(f"/api/v1/memories/{memory.pk}/revert/", {"version": 1}, format="json").status_code == 404
    assert LongTermMemory.objects.get(pk=memory.pk).content == "User lives in Berlin"


def test_developers_read_history_but_cannot_revert(as_user, alice, developer, make_memory):
    memory = _edited(as_user, alice, make_memory)
    client = as_user(developer)
    assert client.get(f"/api/v1/memories/{memory.pk}/history/").status_code == 200
    assert client.post(f"/api/v1/memories/{memory.pk}/revert/", {"version": 1}, format="json").status_code == 403


def test_support_reverts_any_item_and_end_users_not_archived_ones(as_user, alice, support_user, make_memory):
    memory = _edited(as_user, alice, make_memory)
    from memoryboard.ltm.store.items import memory_archive

    memory_archive(memory=memory, actor=support_user, reason=ArchivedReason.STAFF)
    assert as_user(alice).post(f"/api/v1/memories/{memory.pk}/revert/", {"version": 1},
                               format="json").status_code == 403
    response = as_user(support_user).post(f"/api/v1/memories/{memory.pk}/revert/", {"version": 1}, format="json")
    assert response.status_code == 200
    assert response.json()["content"] == "User lives in Shanghai"


def test_anonymous_is_401(api, alice, make_memory):
    memory = make_memory(alice, "User lives in Shanghai")
    assert api.get(f"/api/v1/memories/{memory.pk}/history/").status_code in (401, 403)
