"""The evaluation harness and the shipped bilingual set, on the default offline model."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memoryboard.ltm.evaluation import memory_evaluate
from memoryboard.ltm.ranking import tokenize
from memoryboard.models import LongTermMemory

SET = Path(__file__).parent / "data" / "bilingual_eval.json"
DATA = json.loads(SET.read_text(encoding="utf-8"))


def _words(text: str) -> set[str]:
    """Every word (English, stop words included) and every CJK character bigram of a text."""
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    return words | {t for t in tokenize(text) if not t.isascii()}


def test_the_set_is_large_bilingual_and_hard_enough():
    queries = DATA["queries"]
    items = {item["id"]: item for item in DATA["items"]}
    assert len(queries) >= 150
    cross = [q for q in queries if q["lang"] != items[q["expected"][0]]["lang"]]
    assert len(cross) >= len(queries) / 3
    assert all(q["kind"] == "cross_lingual" for q in cross)
    paraphrases = [q for q in queries if q["kind"] == "paraphrase"]
    assert len(paraphrases) >= len(queries) / 3
    for q in paraphrases:
        item = items[q["expected"][0]]
        assert q["lang"] == item["lang"]
        assert not _words(q["query"]) & _words(item["content"]), q["query"]


@pytest.mark.django_db
def test_the_light_model_does_not_find_meaning_and_nothing_stays():
    """The default model's figures are asserted in test_retrieval_quality (the floor of issue 13)."""
    from memoryboard.llm.embeddings import HashingEmbedder

    light = memory_evaluate(data=DATA, embedder=HashingEmbedder())
    assert light["overall"]["hybrid"]["recall@1"] < 0.3
    assert light["overall"]["keyword"]["recall@1"] > 0.05  # the related queries share words
    assert set(light["by_half"]) == {"even (tuning)", "odd (held out)"}
    assert sum(half["hybrid"]["queries"] for half in light["by_half"].values()) == len(DATA["queries"])
    assert not LongTermMemory.objects.exists()  # the evaluation writes nothing


@pytest.mark.django_db
def test_command_prints_a_table_and_json(tmp_path, settings):
    small = {"items": DATA["items"][:5], "queries": [q for q in DATA["queries"] if q["expected"][0] in
                                                    {i["id"] for i in DATA["items"][:5]}]}
    path = tmp_path / "set.json"
    path.write_text(json.dumps(small), encoding="utf-8")
    out = StringIO()
    call_command("memory_eval", str(path), "--no-progress", stdout=out)
    assert "R@1" in out.getvalue() and "en→zh" in out.getvalue() and "hashing-ngram-384" in out.getvalue()
    out = StringIO()
    call_command("memory_eval", str(path), "--no-progress", "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["queries"] == len(small["queries"]) and set(report["overall"]) == {"hybrid", "semantic", "keyword", "model"}


@pytest.mark.django_db
@pytest.mark.parametrize("body, field", [
    ("[]", "$"), ('{"items": [], "queries": []}', "items"),
    ('{"items": [{"id": "a", "content": "x"}], "queries": [{"query": "q", "expected": ["b"]}]}', "queries[0].expected"),
    ("not json", "not JSON"),
])
def test_command_names_what_is_wrong(tmp_path, body, field):
    path = tmp_path / "bad.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape(field)):
        call_command("memory_eval", str(path), "--no-progress")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("memory_eval", str(tmp_path / "missing.json"), "--no-progress")
