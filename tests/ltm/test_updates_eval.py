"""``manage.py memory_eval --suite updates`` on the dev split meets the targets (offline rules, USE)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db


def test_the_set_is_large_enough_bilingual_and_split_before_tuning():
    from django.conf import settings

    data = json.loads((settings.BASE_DIR / "tests/data/updates_eval.json").read_text(encoding="utf-8"))
    scenarios = data["scenarios"]
    assert len(scenarios) >= 120
    assert {s["split"] for s in scenarios} == {"dev", "test"}
    assert {s["lang"] for s in scenarios} == {"en", "zh"}
    assert {s["kind"] for s in scenarios} == {"update", "non_update", "repeat", "expiry", "when"}
    assert len({s["id"] for s in scenarios}) == len(scenarios)


def test_dev_split_meets_the_targets(use_embedder):
    out = StringIO()
    call_command("memory_eval", "--suite", "updates", "--split", "dev", "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    dev = report["splits"]["dev"]
    assert report["judge"] == "rules (offline)" and set(report["splits"]) == {"dev"}
    assert dev["scenarios"] >= 60
    assert dev["current_first_slot"] >= 0.95, report["failures"]
    assert dev["stale_as_current"] <= 0.02, report["failures"]
    assert dev["collateral_supersede"] <= 0.02, report["failures"]
    assert dev["duplicates"] == 0, report["failures"]
    assert dev["when"] >= 0.9 and dev["as_of"] >= 0.9 and dev["expiry"] == 1.0, report["failures"]
    assert not LongTermMemory.objects.exists()  # rolled back


def test_the_table_names_the_suite_and_each_split(use_embedder):
    out = StringIO()
    call_command("memory_eval", "--suite", "updates", "--split", "test", stdout=out)
    text = out.getvalue()
    assert "updates suite, model use-multilingual-v3, judge rules (offline)" in text
    assert "\ntest " in text and "\ndev " not in text
