"""Previews that are the result: an import's, a conflict's choices, an erase's and an admin bulk action's
preview runs the write and rolls it back, so it lists what the write then does, and leaves nothing behind."""

from __future__ import annotations

import pytest
from django.db import connection

from memoryboard.ltm.people.previews import user_data_erase_preview
from memoryboard.ltm.people.user_data import user_data_counts, user_data_erase
from memoryboard.ltm.search.retrieval import memory_search
from memoryboard.ltm.store.rehearsal import perform, rehearse
from memoryboard.ltm.store.selectors import own_memories
from memoryboard.ltm.write.conflicts import conflict_choices, conflict_settle, conflict_why, merged_text
from memoryboard.ltm.write.importing import memory_import
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.ltm.write.staff import memory_archive_many, memory_merge_selected, memory_restore_many
from memoryboard.models import (
    AnnChange,
    AuditLog,
    EraseTombstone,
    LongTermMemory,
    MemoryEmbedding,
    MemoryStateChange,
    MemoryVersion,
)
from memoryboard.models.namespaces import build_namespace

pytestmark = pytest.mark.django_db


def ns(user):
    return build_namespace(agent_namespace="chat", user_id=str(user.pk))


def save(user, text, **kw):
    return memory_save_reconciled(namespace=ns(user), content=text, memory_type="FACT", agent_id="chat", **kw).memory


def counts():
    return {model.__name__: model.objects.count()
            for model in (LongTermMemory, AuditLog, MemoryVersion, MemoryStateChange, MemoryEmbedding, AnnChange)}


def table(user):
    return sorted((m.content, m.archived, m.archived_reason or "", dict(m.value_json))
                  for m in own_memories(user_id=str(user.pk)))


def conflict_pair(user):
    old = save(user, "I live in Berlin and work at SAP")
    new = save(user, "I live in Hamburg")
    for a, b in ((old, new), (new, old)):
        LongTermMemory.objects.filter(pk=a.pk).update(value_json={**a.value_json, "conflictWith": [b.pk]})
    return LongTermMemory.objects.get(pk=new.pk), LongTermMemory.objects.get(pk=old.pk)


def test_import_preview_names_what_the_import_supersedes_and_is_the_result(alice):
    save(alice, "I moved to Hamburg")
    rows = [{"content": "I live in Vienna", "agent": "chat"}]
    before, stored = counts(), table(alice)
    preview = memory_import(items=rows, user_id=str(alice.pk), actor=alice, dry_run=True)
    assert counts() == before and table(alice) == stored  # nothing written
    replaced = [(old.content, new.content) for old, new in preview.outcome.replaced]
    assert replaced == [("I moved to Hamburg", "I live in Vienna")]
    assert preview.rows[0]["replaces"] == ["I moved to Hamburg"]
    result = memory_import(items=rows, user_id=str(alice.pk), actor=alice, dry_run=False)
    assert result.outcome.texts() == preview.outcome.texts()
    assert LongTermMemory.objects.get(value_json__content="I moved to Hamburg").archived_reason == "superseded"


def test_conflict_choices_are_the_results_and_edit_into_one_drops_nothing_unnamed(alice):
    new, old = conflict_pair(alice)
    why = conflict_why(new=new, old=old)
    assert why.disagree == [("where they live", "berlin", "hamburg")]
    assert ("where they work", "sap") in why.only_earlier
    assert merged_text(new=new, old=old) == "I live in Hamburg; work at SAP"
    before, stored = counts(), table(alice)
    previews = {p.choice: p for p in conflict_choices(new=new, old=old, actor=alice)}
    assert counts() == before and table(alice) == stored
    # Keeping the newer names what goes: the item that says "work at SAP".
    assert previews["new"].loses == ["I live in Berlin and work at SAP"]
    assert previews["old"].loses == ["I live in Hamburg"]
    assert previews["both"].loses == [] and sorted(previews["both"].keeps) == sorted([new.content, old.content])
    assert previews["merge"].keeps == ["I live in Hamburg; work at SAP"]
    for choice in ("new", "old", "both", "merge"):
        n, o = conflict_pair(alice) if choice != "new" else (new, old)
        expected = conflict_choices(new=n, old=o, actor=alice)
        preview = next(p for p in expected if p.choice == choice).outcome
        result = conflict_settle(new=n, old=o, choice=choice, actor=alice)
        result.kept = [i for i in result.kept if i.id in (n.pk, o.pk)]  # as the page lists them: the pair's
        assert result.texts() == preview.texts(), choice
    n, o = conflict_pair(alice)
    edited = "I live in Hamburg and still work at SAP"
    preview = conflict_settle(new=n, old=o, choice="edit", text=edited, actor=alice, dry_run=True)
    result = conflict_settle(new=n, old=o, choice="edit", text=edited, actor=alice)
    assert result.texts() == preview.texts()
    assert [after.content for _before, after in result.changed] == [edited]
    assert LongTermMemory.objects.get(pk=o.pk).superseded_by == n.pk


def test_erase_preview_is_the_erase(alice, bob):
    save(alice, "I live in Hamburg")
    save(alice, "I like green tea")
    save(bob, "I live in Oslo")
    before, stored, sections = counts(), table(alice), user_data_counts(user_id=str(alice.pk))
    preview = user_data_erase_preview(user_id=str(alice.pk), actor=alice)
    assert counts() == before and table(alice) == stored
    assert user_data_counts(user_id=str(alice.pk)) == sections  # every table's rows, the tombstone gate too
    assert not EraseTombstone.objects.filter(erased_at__isnull=False).exists()  # the gate stays open
    assert sorted(i.content for i in preview.outcome.removed) == ["I like green tea", "I live in Hamburg"]
    _erased, result = perform(lambda: user_data_erase(user_id=str(alice.pk), actor=alice),
                              scope=lambda: own_memories(user_id=str(alice.pk)))
    assert result.texts() == preview.outcome.texts()
    assert preview.tables == {table: len(ids) for table, ids in _erased.items()}
    assert LongTermMemory.objects.filter(value_json__content="I live in Oslo").exists()


def test_bulk_action_previews_are_the_results(alice, support_user):
    a = save(alice, "I like green tea")
    c = save(alice, "I work at SAP")
    scope = lambda: own_memories(user_id=str(alice.pk))  # noqa: E731
    for service, items in ((memory_archive_many, [a, c]), (memory_restore_many, [a, c]),
                           (memory_merge_selected, [a, c])):
        before = counts()
        _ids, preview = rehearse(lambda: service(memories=LongTermMemory.objects.filter(pk__in=[m.pk for m in items]),
                                                 actor=support_user), scope=scope)
        assert counts() == before
        _ids, result = perform(lambda: service(memories=LongTermMemory.objects.filter(pk__in=[m.pk for m in items]),
                                               actor=support_user), scope=scope)
        assert result.texts() == preview.texts() and result.touched, service.__name__


def test_a_rehearsal_leaves_no_hook_task_or_search_cache_behind(alice, settings):
    save(alice, "I moved to Hamburg")
    query = "Where do I live?"
    def search():
        return [r.memory.content for r in memory_search(queryset=own_memories(user_id=str(alice.pk)), query=query)]

    found = search()
    hooks_before = len(connection.run_on_commit)
    memory_import(items=[{"content": "I live in Vienna"}], user_id=str(alice.pk), actor=alice, dry_run=True)
    assert len(connection.run_on_commit) == hooks_before  # the index follow and task enqueues went with it
    assert search() == found


def test_an_erase_preview_leaves_the_hnsw_files_alone(settings, tmp_path, alice):
    from io import StringIO

    from django.core.management import call_command

    from memoryboard.ltm.search import ann

    settings.MEMORYBOARD_ANN_DIR = str(tmp_path / "ann")
    ann._views.clear()
    try:
        mine = save(alice, "User plays the violin")
        call_command("ann_rebuild", "--no-progress", stdout=StringIO())
        key = MemoryEmbedding.objects.get(memory_id=mine.pk)
        logged = AnnChange.objects.count()
        user_data_erase_preview(user_id=str(alice.pk), actor=alice)
        ann._views.clear()
        assert key.id in ann._snapshot(key.model_name)[0] and AnnChange.objects.count() == logged
    finally:
        ann._views.clear()


def test_why_and_merge_in_chinese_name_what_the_newer_leaves_out(alice):
    from django.utils import translation

    from memoryboard.ltm.write.items import memory_build

    def item(text):
        return memory_build(namespace=ns(alice), content=text, memory_type="FACT", source="manual", agent_id="chat")

    new, old = item("我住在汉堡"), item("我住在柏林，在SAP工作")
    with translation.override("zh-hans"):
        sentence = conflict_why(new=new, old=old).sentence
    assert sentence.startswith("两条记忆在这一点上不一致：住在哪里：“柏林”（较早）还是“汉堡”（较新）。")
    assert "“在SAP工作”" in sentence  # named, even where no attribute is recognised
    assert merged_text(new=new, old=old) == "我住在汉堡，在SAP工作"


def test_a_rejection_preview_names_the_state_change(alice, support_user, make_memory):
    from memoryboard.ltm.write.review import memory_review_reject

    waiting = make_memory(alice, "I like jazz", archived_reason="pending_review")

    def reject():
        return memory_review_reject(memories=LongTermMemory.objects.filter(pk=waiting.pk), actor=support_user)

    scope = lambda: own_memories(user_id=str(alice.pk))  # noqa: E731
    _ids, preview = rehearse(reject, scope=scope)
    assert [(a.state, b.state) for a, b in preview.switched] == [("pending_review", "rejected")]
    assert LongTermMemory.objects.get(pk=waiting.pk).archived_reason == "pending_review"
    _ids, result = perform(reject, scope=scope)
    assert result.texts() == preview.texts()
