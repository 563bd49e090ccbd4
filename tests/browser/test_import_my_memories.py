"""An end user brings memories back in through My memories → Import: the export downloaded from the same
page, previewed (nothing written yet), imported; a file with a bad row is explained and writes nothing.
Screenshots under tests/artifacts/."""

from __future__ import annotations

import json

import pytest

from memoryboard.models import LongTermMemory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _live_contents(user) -> list[tuple[str, str]]:
    """(type, content) of the user's items that are not deleted or archived."""
    rows = LongTermMemory.objects.filter(namespace__endswith=f'"user:{user.pk}","memories"]', archived=False)
    return sorted((m.memory_type, m.content) for m in rows)


def test_export_delete_all_then_import_brings_the_same_items_back(session, alice, bob, make_memory, tmp_path):
    make_memory(alice, "I work as a Java developer in Berlin")
    make_memory(alice, "I like green tea", memory_type="PREFERENCE")
    make_memory(bob, "Bob keeps bees")
    before = _live_contents(alice)
    s = session().login(alice)
    s.goto("/me/memories/")
    with s.page.expect_download() as download:
        s.page.locator("a:has-text('Export all my data (JSON)')").click()
    exported = tmp_path / "my-memories.json"
    exported.write_bytes(open(download.value.path(), "rb").read())

    s.page.locator("a:has-text('Delete all memories…')").click()
    s.page.wait_for_load_state("load")
    s.page.locator("#confirm-bulk").click()
    s.page.wait_for_load_state("load")
    assert _live_contents(alice) == []

    s.goto("/me/memories/")
    s.page.locator("a:has-text('Import…')").click()
    s.page.wait_for_load_state("load")
    assert s.page.url.endswith("/me/memories/import/")
    s.page.set_input_files("#id_file", str(exported))
    s.page.locator("#import-form button[type=submit]").click()
    s.page.wait_for_load_state("load")
    summary = s.page.locator("#import-summary").inner_text()
    # The deleted items are still there (recently deleted): they come back, no copies are made.
    assert "Preview" in summary and "0 new items" in summary and "0 invalid items" in summary
    assert "2 items you deleted come back" in summary
    listed = s.page.locator("#import-rows tbody tr").evaluate_all(
        "rows => rows.map(r => [r.cells[1].textContent.trim(), r.cells[3].textContent.trim(), r.cells[4].textContent.trim()])")
    assert sorted(listed) == [["Fact", "I work as a Java developer in Berlin", "deleted by you: comes back"],
                              ["Preference", "I like green tea", "deleted by you: comes back"]]
    assert s.page.locator("#import-form").count() == 0  # one way on: Import or Cancel
    assert _live_contents(alice) == []  # a preview writes nothing
    s.shot("import_preview")

    s.page.locator("#confirm-import").click()
    s.page.wait_for_load_state("load")
    assert s.page.url.endswith("/me/memories/")
    assert "2 memories imported." in s.text()
    assert "I work as a Java developer in Berlin" in s.text() and "I like green tea" in s.text()
    s.shot("import_done")
    assert _live_contents(alice) == before
    assert _live_contents(bob) == [("FACT", "Bob keeps bees")]


def test_a_bad_row_is_named_and_nothing_is_imported(session, alice, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"content": "Lives in Shanghai"}, {"content": "Opinions", "type": "OPINION"},
                               {"type": "FACT"}]), encoding="utf-8")
    s = session().login(alice)
    s.goto("/me/memories/import/")
    s.page.set_input_files("#id_file", str(bad))
    s.page.locator("#import-form button[type=submit]").click()
    s.page.wait_for_load_state("load")
    rows = s.page.locator("table.invalid-rows tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.cells, c => c.textContent.trim()).slice(0, 2))")
    assert rows == [["2", "Type"], ["3", "Text"]]  # items numbered from 1, fields by their names
    assert s.page.locator("#confirm-import").count() == 0  # no way to import a file with a bad row
    s.shot("import_bad_rows")
    assert not LongTermMemory.objects.exists()
