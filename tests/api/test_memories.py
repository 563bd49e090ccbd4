"""The memories endpoints: list, filters, pagination, retrieve, PATCH, DELETE, archive, restore, search."""

from __future__ import annotations

import pytest

from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory
from tests.api.helpers import error_of

pytestmark = pytest.mark.django_db

FIELDS = {
    "id", "namespace", "agent", "user", "type", "source", "content", "relevance_score", "access_count",
    "last_accessed_at", "created_at", "updated_at", "archived", "archived_at", "archived_reason",
    "state", "valid_from", "valid_to", "superseded_by", "expires_at", "conflict_with",
}


def test_list_shape_and_own_items_only(as_user, alice, bob, make_memory):
    mine = make_memory(alice, "Alice writes Python", memory_type="FACT")
    make_memory(bob, "Bob likes tea")
    response = as_user(alice).get("/api/v1/memories/")
    assert response.status_code == 200
    body = response.json()
    assert [item["id"] for item in body["results"]] == [mine.pk]
    item = body["results"][0]
    assert set(item) == FIELDS
    assert item["content"] == "Alice writes Python"
    assert item["user"] == str(alice.pk) and item["agent"] == "chat" and item["type"] == "FACT"
    assert item["namespace"] == f'["agent:chat","user:{alice.pk}","memories"]'


def test_staff_see_everyone_and_filter(as_user, support_user, alice, bob, make_memory):
    make_memory(alice, "Alice fact", memory_type="FACT", agent="chat")
    make_memory(alice, "Alice preference", memory_type="PREFERENCE", agent="code", source="auto_extract")
    make_memory(bob, "Bob fact", agent="chat", archived_reason=ArchivedReason.STAFF)
    client = as_user(support_user)

    def contents(query: str) -> set[str]:
        response = client.get("/api/v1/memories/" + query)
        assert response.status_code == 200, response.content
        return {item["content"] for item in response.json()["results"]}

    assert contents("") == {"Alice fact", "Alice preference", "Bob fact"}
    assert contents(f"?user={alice.pk}") == {"Alice fact", "Alice preference"}
    assert contents("?agent=code") == {"Alice preference"}
    assert contents("?type=preference") == {"Alice preference"}
    assert contents("?source=auto_extract") == {"Alice preference"}
    assert contents("?archived=true") == {"Bob fact"}
    assert contents(f"?archived=false&user={alice.pk}&agent=chat") == {"Alice fact"}


def test_bad_filter_values_are_400_naming_the_filter(as_user, support_user):
    response = as_user(support_user).get("/api/v1/memories/?type=OPINION")
    assert response.status_code == 400
    assert "type" in error_of(response)["fields"]


def test_pagination_without_count(as_user, alice, make_memory):
    for i in range(5):
        make_memory(alice, f"item {i}")
    client = as_user(alice)
    first = client.get("/api/v1/memories/?limit=2").json()
    assert "count" not in first and len(first["results"]) == 2 and first["next"] and first["previous"] is None
    seen = [item["id"] for item in first["results"]]
    page = client.get(first["next"]).json()
    seen += [item["id"] for item in page["results"]]
    last = client.get(page["next"]).json()
    seen += [item["id"] for item in last["results"]]
    assert last["next"] is None
    assert sorted(seen) == sorted(LongTermMemory.objects.values_list("pk", flat=True))


@pytest.mark.parametrize("query,field", [("limit=0", "limit"), ("limit=-1", "limit"), ("limit=100000", "limit"),
                                         ("limit=ten", "limit"), ("offset=-5", "offset"), ("offset=1e99", "offset")])
def test_bad_pagination_is_400(as_user, alice, query, field):
    response = as_user(alice).get("/api/v1/memories/?" + query)
    assert response.status_code == 400
    assert field in error_of(response)["fields"]


def test_retrieve(as_user, alice, make_memory):
    memory = make_memory(alice, "Alice retrieves")
    response = as_user(alice).get(f"/api/v1/memories/{memory.pk}/")
    assert response.status_code == 200 and response.json()["content"] == "Alice retrieves"


def test_owner_patches_content_and_type_audited_and_reembedded(as_user, alice, make_memory):
    from memoryboard.models import MemoryEmbedding

    memory = make_memory(alice, "old content")
    old_vector = MemoryEmbedding.objects.get(memory_id=memory.pk).vector
    response = as_user(alice).patch(
        f"/api/v1/memories/{memory.pk}/", {"content": "new content", "type": "preference"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["content"] == "new content" and response.json()["type"] == "PREFERENCE"
    memory.refresh_from_db()
    assert memory.content == "new content"
    assert MemoryEmbedding.objects.get(memory_id=memory.pk).vector != old_vector
    log = AuditLog.objects.filter(object_id=memory.pk, action=AuditLog.Action.UPDATE).get()
    assert log.before["value_json"]["content"] == "old content"


def test_support_patches_anyones_item(as_user, support_user, alice, make_memory):
    memory = make_memory(alice, "typo conent")
    response = as_user(support_user).patch(f"/api/v1/memories/{memory.pk}/", {"content": "typo content"}, format="json")
    assert response.status_code == 200
    memory.refresh_from_db()
    assert memory.content == "typo content"


@pytest.mark.parametrize(
    "body,field",
    [({}, "content"), ({"type": "OPINION"}, "type"), ({"content": ""}, "content"), ({"content": 5}, "content"),
     ({"content": ["a"]}, "content"), ({"namespace": '["agent:chat","user:1","memories"]'}, "namespace"),
     ({"content": "x", "_userId": "1"}, "_userId")],
)
def test_bad_patch_is_400_naming_the_field(as_user, alice, make_memory, body, field):
    memory = make_memory(alice, "unchanged")
    response = as_user(alice).patch(f"/api/v1/memories/{memory.pk}/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in error_of(response)["fields"]
    memory.refresh_from_db()
    assert memory.content == "unchanged" and memory.namespace.endswith(f'"user:{alice.pk}","memories"]')


def test_put_is_405_json(as_user, support_user, alice, make_memory):
    memory = make_memory(alice, "x")
    client = as_user(support_user)
    response = client.put(f"/api/v1/memories/{memory.pk}/", {"content": "y"}, format="json")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


def test_end_user_delete_is_a_restorable_soft_delete(as_user, alice, make_memory):
    memory = make_memory(alice, "forget me")
    client = as_user(alice)
    assert client.delete(f"/api/v1/memories/{memory.pk}/").status_code == 204
    memory.refresh_from_db()
    assert memory.archived and memory.archived_reason == ArchivedReason.USER_DELETED
    response = client.post(f"/api/v1/memories/{memory.pk}/restore/")
    assert response.status_code == 200 and response.json()["archived"] is False


def test_support_delete_archives(as_user, support_user, alice, make_memory):
    memory = make_memory(alice, "stale")
    assert as_user(support_user).delete(f"/api/v1/memories/{memory.pk}/").status_code == 204
    memory.refresh_from_db()
    assert memory.archived and memory.archived_reason == ArchivedReason.STAFF


def test_archive_and_restore_by_support(as_user, support_user, alice, make_memory):
    memory = make_memory(alice, "archive me")
    client = as_user(support_user)
    response = client.post(f"/api/v1/memories/{memory.pk}/archive/")
    assert response.status_code == 200 and response.json()["archived_reason"] == "staff"
    response = client.post(f"/api/v1/memories/{memory.pk}/restore/")
    assert response.status_code == 200 and response.json()["archived"] is False


def test_end_user_cannot_archive_or_restore_staff_archive(as_user, alice, make_memory):
    memory = make_memory(alice, "archived by staff", archived_reason=ArchivedReason.STAFF)
    client = as_user(alice)
    assert client.post(f"/api/v1/memories/{memory.pk}/restore/").status_code == 403
    active = make_memory(alice, "active")
    assert client.post(f"/api/v1/memories/{active.pk}/archive/").status_code == 403
    memory.refresh_from_db()
    active.refresh_from_db()
    assert memory.archived and not active.archived


def test_developer_reads_but_cannot_write(as_user, developer, alice, make_memory):
    memory = make_memory(alice, "read only")
    client = as_user(developer)
    assert client.get(f"/api/v1/memories/{memory.pk}/").status_code == 200
    for response in (
        client.patch(f"/api/v1/memories/{memory.pk}/", {"content": "changed"}, format="json"),
        client.delete(f"/api/v1/memories/{memory.pk}/"),
        client.post(f"/api/v1/memories/{memory.pk}/archive/"),
        client.post(f"/api/v1/memories/{memory.pk}/restore/"),
    ):
        assert response.status_code == 403
        assert error_of(response)["code"] == "permission_denied"
    memory.refresh_from_db()
    assert memory.content == "read only" and not memory.archived


def test_search_ranks_own_active_items(as_user, alice, bob, make_memory):
    make_memory(alice, "Alice is a Java backend developer")
    make_memory(alice, "Alice prefers code examples", memory_type="PREFERENCE")
    make_memory(alice, "Java developer, archived", archived_reason=ArchivedReason.STAFF)
    make_memory(bob, "Bob is a Java backend developer")
    response = as_user(alice).get("/api/v1/memories/search/?q=Java backend developer&k=5")
    assert response.status_code == 200, response.content
    results = response.json()
    assert [item["content"] for item in results][0] == "Alice is a Java backend developer"
    assert {item["user"] for item in results} == {str(alice.pk)}
    assert all("archived" not in item["content"] for item in results)
    assert set(results[0]) == FIELDS | {"score"}
    assert results[0]["score"] >= results[-1]["score"]


def test_search_k_limits_and_filters(as_user, support_user, alice, bob, make_memory):
    for i in range(4):
        make_memory(alice, f"tea habit {i}")
        make_memory(bob, f"tea habit {i}")
    client = as_user(support_user)
    assert len(client.get("/api/v1/memories/search/?q=tea&k=3").json()) == 3
    results = client.get(f"/api/v1/memories/search/?q=tea&k=100&user={bob.pk}").json()
    assert len(results) == 4 and {item["user"] for item in results} == {str(bob.pk)}


@pytest.mark.parametrize("query,field", [("", "q"), ("?q=", "q"), ("?q=x&k=0", "k"), ("?q=x&k=101", "k"),
                                         ("?q=x&k=-3", "k"), ("?q=x&k=many", "k")])
def test_search_bad_parameters(as_user, alice, query, field):
    response = as_user(alice).get("/api/v1/memories/search/" + query)
    assert response.status_code == 400
    assert field in error_of(response)["fields"]


def test_fast_representation_equals_drf_fields(alice, make_memory):
    """MemorySerializer builds its dict directly; it must match what the declared fields produce."""
    from rest_framework import serializers

    from memoryboard.api.serializers import MemorySerializer
    from memoryboard.ltm.store.items import memory_archive

    memory = make_memory(alice, "same shape 记忆")
    memory = memory_archive(memory=memory, actor=None)
    LongTermMemory.objects.filter(pk=memory.pk).update(access_count=3)
    memory.refresh_from_db()
    memory.last_accessed_at = memory.updated_at
    serializer = MemorySerializer()
    assert serializer.to_representation(memory) == serializers.ModelSerializer.to_representation(serializer, memory)
