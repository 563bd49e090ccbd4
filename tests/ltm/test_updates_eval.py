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


def _small_set(tmp_path):
    data = {"description": "two steps", "now": "2026-11-20T12:00:00Z", "scenarios": [
        {"id": "u-1", "kind": "update", "lang": "en", "channel": "chat",
         "steps": [{"say": "I live in Graz.", "days_ago": 100}, {"say": "I moved to Ghent.", "days_ago": 1}],
         "query": "Where does the user live?", "current": 1, "stale": [0], "compatible": [],
         "expect_current_rows": 1}]}
    path = tmp_path / "updates.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_dev_and_blind_sets_are_printed_side_by_side_with_the_gap(tmp_path, use_embedder):
    dev, blind = tmp_path / "dev", tmp_path / "blind"
    dev.mkdir(), blind.mkdir()
    for folder in (dev, blind):
        (folder / "updates.json").write_text(_small_set(tmp_path).read_text(encoding="utf-8"), encoding="utf-8")
    out = StringIO()
    call_command("memory_eval", "--suite", "updates", str(dev / "updates.json"), str(blind / "updates.json"),
                 stdout=out)
    text = out.getvalue()
    assert "judge rules (offline): dev 1 scenarios, blind 1 scenarios" in text
    assert "dev       blind         gap" in text
    assert "current_first" in text and "+0.0000" in text
    assert "blind failed" not in text  # the blind set's scenarios are never named


def test_the_updates_suite_runs_the_judge_at_an_endpoint_and_names_its_model(tmp_path, use_embedder, openai_server):
    out = StringIO()
    call_command("memory_eval", "--suite", "updates", str(_small_set(tmp_path)), "--endpoint",
                 openai_server.base_url, "--model", "judge-under-test", "--api-key", "k", stdout=out)
    assert "judge llm:judge-under-test" in out.getvalue()
    assert openai_server.chat_requests()  # the judge was asked (through the openai client)


def test_an_update_taken_for_a_repeat_of_the_stale_fact_is_a_miss(use_embedder):
    """A new statement decided "same" as the stale item leaves the stale text as what search returns: it
    is counted as a miss of the current fact and as the stale fact returned, not as a success."""
    from memoryboard.evaluation.updates import updates_evaluate

    data = {"now": "2026-11-20T12:00:00Z", "scenarios": [
        {"id": "u-1", "kind": "update", "lang": "en", "channel": "chat",
         "steps": [{"say": "I live in Graz.", "days_ago": 100}, {"say": "I live in Graz.", "days_ago": 1}],
         "query": "Where does the user live?", "current": 1, "stale": [0], "compatible": [],
         "expect_current_rows": 1}]}
    report = updates_evaluate(data=data, name="dev")
    assert [verdict for _id, _step, verdict, _why in report["trace"]] == ["new", "same"]
    assert report["splits"]["dev"]["current_first"] == 0.0
    assert report["splits"]["dev"]["stale_as_current"] == 1.0
