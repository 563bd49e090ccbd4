"""The review queue, health and timeline on My memories, the support user page and the admin item page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryboard.ltm.write.edits import memory_update
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryVersion

pytestmark = pytest.mark.django_db


def _conflict(make_memory, user):
    old = make_memory(user, "User lives in Shanghai")
    new = make_memory(user, "User lives in Berlin")
    LongTermMemory.objects.filter(pk=old.pk).update(value_json={**old.value_json, "conflictWith": [new.pk]})
    LongTermMemory.objects.filter(pk=new.pk).update(value_json={**new.value_json, "conflictWith": [old.pk]})
    return new, old


def _pending(make_memory, user, text):
    item = make_memory(user, text)
    LongTermMemory.objects.filter(pk=item.pk).update(archived=True, archived_reason=ArchivedReason.PENDING_REVIEW)
    return item


def test_my_memories_shows_the_queue_and_health(login, alice, bob, make_memory):
    _pending(make_memory, alice, "User owns a red bicycle")
    _conflict(make_memory, alice)
    _pending(make_memory, bob, "Bob secret pending item")
    page = login(alice).get(reverse("my-memories")).content.decode()
    assert 'id="memory-review"' in page and 'id="memory-health"' in page
    assert "User owns a red bicycle" in page and "1 memory waits for approval" in page
    assert "Keep the newer" in page and "User lives in Shanghai" in page
    assert "Bob secret pending item" not in page


def test_end_user_approves_and_rejects_in_bulk_only_their_own(login, alice, bob, make_memory):
    a = _pending(make_memory, alice, "User owns a red bicycle")
    b = _pending(make_memory, alice, "User owns a blue car")
    theirs = _pending(make_memory, bob, "Bob owns a boat")
    client = login(alice)
    response = client.post(reverse("my-memories-review"), {"action": "approve", "ids": [a.pk, b.pk, theirs.pk]})
    assert response.status_code == 302
    assert LongTermMemory.objects.filter(pk__in=[a.pk, b.pk], archived=False).count() == 2
    assert LongTermMemory.objects.get(pk=theirs.pk).archived_reason == ArchivedReason.PENDING_REVIEW
    c = _pending(make_memory, alice, "User owns a green tent")
    client.post(reverse("my-memories-review"), {"one": f"reject:{c.pk}"})
    assert LongTermMemory.objects.get(pk=c.pk).archived_reason == ArchivedReason.REJECTED


def test_end_user_resolves_a_conflict_and_sees_what_replaced_what(login, alice, make_memory):
    new, old = _conflict(make_memory, alice)
    client = login(alice)
    client.post(reverse("my-memories-review"), {"action": "resolve", "new": new.pk, "old": old.pk, "keep": "new"})
    old.refresh_from_db()
    assert old.archived_reason == ArchivedReason.SUPERSEDED and old.superseded_by == new.pk
    page = client.get(reverse("my-memories-detail", args=[old.pk])).content.decode()
    assert 'class="supersede-chain"' in page
    chain = page.split('class="supersede-chain"')[1].split("</p>")[0]
    assert chain.index("User lives in Shanghai") < chain.index("→") < chain.index("User lives in Berlin")
    assert "until " in chain


def test_a_user_cannot_resolve_someone_elses_conflict(login, alice, bob, make_memory):
    new, old = _conflict(make_memory, bob)
    response = login(alice).post(reverse("my-memories-review"),
                                 {"action": "resolve", "new": new.pk, "old": old.pk, "keep": "new"})
    assert response.status_code == 404
    assert not LongTermMemory.objects.get(pk=old.pk).archived


def test_support_resolves_from_the_user_page_and_developers_cannot(login, support_user, developer, alice, make_memory):
    new, old = _conflict(make_memory, alice)
    url = reverse("person-review", args=[str(alice.pk)])
    page = login(support_user).get(reverse("person", args=[str(alice.pk)])).content.decode()
    assert "Keep the newer" in page and 'id="memory-health"' in page
    assert login(developer).post(url, {"action": "resolve", "new": new.pk, "old": old.pk, "keep": "old"}).status_code == 403
    assert not LongTermMemory.objects.get(pk=new.pk).archived
    login(support_user).post(url, {"action": "resolve", "new": new.pk, "old": old.pk, "keep": "old"})
    assert LongTermMemory.objects.get(pk=new.pk).archived_reason == ArchivedReason.REJECTED


def test_timeline_lists_versions_and_reverts(login, alice, support_user, make_memory):
    item = make_memory(alice, "User lives in Shanghai")
    memory_update(memory=item, actor=alice, content="User lives in Berlin")
    client = login(alice)
    page = client.get(reverse("my-memories-detail", args=[item.pk])).content.decode()
    assert 'data-version="1"' in page and 'data-version="2"' in page and "Revert to this" in page
    client.post(reverse("my-memories-revert", args=[item.pk]), {"version": 1})
    assert LongTermMemory.objects.get(pk=item.pk).content == "User lives in Shanghai"
    assert MemoryVersion.objects.filter(memory_id=item.pk).count() == 3
    staff = login(support_user)
    admin_page = staff.get(reverse("admin:memoryboard_longtermmemory_change", args=[item.pk])).content.decode()
    assert 'id="memory-timeline"' in admin_page and 'data-version="3"' in admin_page
    staff.post(reverse("support-memory-revert", args=[item.pk]), {"version": 2})
    assert LongTermMemory.objects.get(pk=item.pk).content == "User lives in Berlin"


def test_revert_by_someone_else_or_to_no_version_changes_nothing(login, alice, bob, developer, make_memory):
    item = make_memory(alice, "User lives in Shanghai")
    memory_update(memory=item, actor=alice, content="User lives in Berlin")
    assert login(bob).post(reverse("my-memories-revert", args=[item.pk]), {"version": 1}).status_code == 404
    assert login(developer).post(reverse("support-memory-revert", args=[item.pk]), {"version": 1}).status_code == 403
    login(alice).post(reverse("my-memories-revert", args=[item.pk]), {"version": 9})
    assert LongTermMemory.objects.get(pk=item.pk).content == "User lives in Berlin"


def test_duplicates_are_suggested_and_merged_or_dismissed(login, alice, make_memory):
    used = make_memory(alice, "User likes green tea")
    twin = make_memory(alice, "User likes green tea very much")
    LongTermMemory.objects.filter(pk=used.pk).update(access_count=5)
    client = login(alice)
    page = client.get(reverse("my-memories")).content.decode()
    assert "1 possible duplicate" in page
    client.post(reverse("my-memories-review"), {"action": "distinct", "keep_id": used.pk, "other_id": twin.pk})
    assert "possible duplicate" not in client.get(reverse("my-memories")).content.decode()
    third = make_memory(alice, "User likes green tea a lot")
    client.post(reverse("my-memories-review"), {"action": "merge", "keep_id": used.pk, "other_id": third.pk})
    third.refresh_from_db()
    assert third.archived_reason == "merged" and third.merged_into == used.pk
    page = client.get(reverse("my-memories-detail", args=[third.pk])).content.decode()
    assert "Merged into" in page


def test_health_counts_link_to_their_lists(login, support_user, alice, make_memory):
    _conflict(make_memory, alice)
    _pending(make_memory, alice, "User owns a red bicycle")
    page = login(support_user).get(reverse("person", args=[str(alice.pk)]))
    html = page.content.decode()
    health = html.split('id="memory-health"')[1].split("</section>")[0]
    assert 'data-health="conflicts"><a href="#memory-review-conflicts">1</a>' in health
    assert 'data-health="pending"><a href="#memory-review-pending">1</a>' in health
    from memoryboard.agents_config import agent_labels

    assert f"<th>{agent_labels()['chat']}</th>" in health and "<th>chat</th>" not in health  # by name
    assert "state=active" in health
