"""Memories that stay true, in a real browser: support resolves a conflict on the user page and reverts an
edit from the admin item page; the user then sees in My memories what replaced what, and the versions."""

from __future__ import annotations

import pytest

from memoryboard.ltm.write.edits import memory_update
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _click_and_wait(s, locator):
    with s.page.expect_navigation():
        locator.click()


def test_support_resolves_a_conflict_and_reverts_then_the_user_sees_what_replaced_what(
        session, support_user, bob_named, make_memory):
    old = make_memory(bob_named, "Bob lives in Shanghai")
    new = make_memory(bob_named, "Bob moved to Berlin last month and lives in Berlin now")
    LongTermMemory.objects.filter(pk=old.pk).update(value_json={**old.value_json, "conflictWith": [new.pk]})
    LongTermMemory.objects.filter(pk=new.pk).update(value_json={**new.value_json, "conflictWith": [old.pk]})
    job = make_memory(bob_named, "Bob works as a Java developer")
    memory_update(memory=job, actor=bob_named, content="Bob works as a PHP developer")  # a wrong edit

    # Support: the user page shows the conflict in the health table and the queue.
    s = session().login(support_user)
    s.goto(f"/support/users/{bob_named.pk}/")
    health = s.page.locator("#memory-health td[data-health=conflicts] a")
    assert health.inner_text() == "1"
    pair = s.page.locator("form.conflict-pair")
    assert "Bob lives in Shanghai" in pair.inner_text() and "Berlin" in pair.inner_text()
    s.shot("time_support_conflict_queue")
    _click_and_wait(s, pair.locator("button[data-action=keep-new]"))
    assert "Conflict resolved." in s.text()
    assert s.page.locator("form.conflict-pair").count() == 0
    old.refresh_from_db()
    assert old.archived_reason == ArchivedReason.SUPERSEDED and old.superseded_by == new.pk
    assert AuditLog.objects.filter(object_id=old.pk, reason="conflict: kept the newer", actor=support_user).exists()

    # Support: revert the wrong edit from the admin item page's timeline.
    s.goto(f"/admin/memoryboard/longtermmemory/{job.pk}/change/")
    timeline = s.page.locator("#memory-timeline")
    assert timeline.locator("tr.version").count() == 2
    s.shot("time_admin_timeline_before_revert")
    _click_and_wait(s, timeline.locator("tr.version[data-version='1'] button[data-action=revert]"))
    assert "Reverted to version 1." in s.text()
    assert LongTermMemory.objects.get(pk=job.pk).content == "Bob works as a Java developer"
    assert s.page.locator("#memory-timeline tr.version").count() == 3
    s.shot("time_admin_timeline_after_revert")

    # Bob: My memories → the superseded item shows what replaced it.
    u = session().login(bob_named)
    u.goto("/me/memories/")
    assert "Bob lives in Shanghai" in u.page.locator("#replaced").inner_text()
    u.shot("time_my_memories_after_resolution")
    _click_and_wait(u, u.page.locator("#replaced a", has_text="details").first)
    chain = u.page.locator("#memory-timeline .supersede-chain").inner_text()
    assert chain.index("Bob lives in Shanghai") < chain.index("→") < chain.index("Berlin")
    assert "until " in chain and "(in use now)" in chain
    u.shot("time_my_memory_replaced_by")
    u.goto(f"/me/memories/{job.pk}/")
    versions = u.page.locator("#memory-timeline tr.version")
    assert versions.count() == 3 and "Reverted" in versions.nth(2).inner_text()
    assert "sam-support" in versions.nth(2).inner_text()
    u.shot("time_my_memory_versions")
