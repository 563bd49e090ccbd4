"""The user page's audit trail finds every entry about the person by whose data it is about
(``subject_user_id``), also entries of items purged or deleted since, in words; never another user's.
The admin's "subject user" filter and the export/erase read the same column."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from memoryboard.ltm.people.user_data import memory_export_payload, user_data_erase
from memoryboard.ltm.store.items import memory_delete_for_user, memory_purge_deleted, memory_set_paused
from memoryboard.ltm.write.staff import memory_purge_many
from memoryboard.models import AuditLog, LongTermMemory
from tests.i18n.test_no_internals_shown import internals

pytestmark = pytest.mark.django_db


def _audit_rows(html: str) -> str:
    start = html.index('id="person-audit"')
    return html[start:html.index("</section>", start)]


@pytest.fixture
def history(bob_named, alice, superuser, support_user, make_memory):
    """bob: an item paused then purged by a superuser, an item he deleted that the retention job purged,
    an item he deleted (still kept for undo); alice: an item paused and purged."""
    purged = make_memory(bob_named, "bob's purged note about sailing")
    memory_set_paused(memory=purged, actor=support_user, paused=True)
    memory_purge_many(memories=[purged], actor=superuser)
    retired = make_memory(bob_named, "bob's old note about chess")
    memory_delete_for_user(memory=retired, actor=bob_named)
    LongTermMemory.objects.filter(pk=retired.pk).update(archived_at=timezone.now() - timedelta(days=400))
    memory_purge_deleted(dry_run=False)
    deleted = make_memory(bob_named, "bob's deleted note about tennis")
    memory_delete_for_user(memory=deleted, actor=bob_named)
    others = make_memory(alice, "alice's purged secret")
    memory_set_paused(memory=others, actor=support_user, paused=True)
    memory_purge_many(memories=[others], actor=superuser)
    assert not LongTermMemory.objects.filter(pk__in=[purged.pk, retired.pk, others.pk]).exists()
    return {"purged": purged, "retired": retired, "deleted": deleted, "others": others}


def test_every_entry_is_written_with_whose_data_it_is_about(history, bob_named, alice):
    bob, mine = str(bob_named.pk), str(alice.pk)
    for key in ("purged", "retired", "deleted"):
        entries = AuditLog.objects.filter(object_id=history[key].pk)
        assert entries.count() >= 2 and {e.subject_user_id for e in entries} == {bob}, key
    # The pause entry records no namespace: the item said whose it was when it was written.
    assert AuditLog.objects.get(object_id=history["others"].pk, action="pause").subject_user_id == mine


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_support_user_page_lists_entries_of_purged_and_deleted_items_in_words(
        history, login, support_user, bob_named, settings, language):
    settings.LANGUAGE_CODE = language
    try:
        html = login(support_user).get(reverse("person", args=[bob_named.pk])).content.decode()
    finally:
        translation.deactivate()
    rows = _audit_rows(html)
    gone = "（已不再存储）" if language == "zh-hans" else " (no longer stored)"
    assert f"bob&#x27;s purged note about sailing{gone}" in rows  # the pause and the purge of a purged item
    assert f"bob&#x27;s old note about chess{gone}" in rows  # deleted by bob, purged by the retention job
    assert rows.count("sailing") == 3 and rows.count("chess") == 3  # create, pause/delete, purge
    assert f'href="#item-{history["deleted"].pk}"' in rows and rows.count("tennis") == 2  # still kept: a link
    assert "alice" not in rows
    for key in ("purged", "retired"):
        assert history[key].pk not in rows  # a gone item is named by its text, never its id
    assert internals(html) == []


def test_the_admin_subject_user_filter_finds_entries_of_purged_items(history, login, superuser, bob_named):
    url = reverse("admin:memoryboard_auditlog_changelist")
    page = login(superuser).get(url, {"subject_user": "bob"})
    listed = {e.object_id for e in page.context["cl"].result_list}
    assert {history["purged"].pk, history["retired"].pk, history["deleted"].pk} <= listed
    assert history["others"].pk not in listed


def test_export_and_erase_find_the_entries_by_subject_and_the_erase_forgets_whose_they_were(
        history, bob_named, alice):
    bob = str(bob_named.pk)
    exported = {row["object_id"] for row in memory_export_payload(user_id=bob)["audit_log"]}
    assert {history["purged"].pk, history["retired"].pk} <= exported and history["others"].pk not in exported
    erased = set(user_data_erase(user_id=bob, actor=None)["memoryboard_audit_log"])
    about_bob = AuditLog.objects.filter(pk__in=erased)
    assert about_bob.exclude(before=None).count() == 0 and about_bob.exclude(after=None).count() == 0
    # Whose an item's entry was goes with its content; the entries whose id is bob's keep it.
    assert set(about_bob.values_list("subject_user_id", flat=True)) == {""}
    again = memory_export_payload(user_id=bob)["audit_log"]
    assert [row["action"] for row in again] == ["erase"]
    assert AuditLog.objects.get(object_id=history["others"].pk, action="pause").subject_user_id == str(alice.pk)
