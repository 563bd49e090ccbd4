"""The evaluation harness and the shipped bilingual set, on the default offline model."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memoryboard.evaluation.retrieval import memory_evaluate
from memoryboard.models import LongTermMemory

SET = Path(__file__).parents[1] / "data" / "bilingual_eval.json"
DATA = json.loads(SET.read_text(encoding="utf-8"))


def _builder():
    """tests/data/build_conversation_eval.py, whose ``set_tokens`` is what the sets call a word."""
    import importlib.util

    path = Path(__file__).parents[1] / "data" / "build_conversation_eval.py"
    spec = importlib.util.spec_from_file_location("build_conversation_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _words(text: str) -> set[str]:
    """Every word (English, stop words included) and every CJK character bigram of a text."""
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    return words | {t for t in _builder().set_tokens(text) if not t.isascii()}


def test_the_set_is_large_bilingual_and_hard_enough():
    queries = DATA["queries"]
    # The split is fixed in the file: the even positions dev (where the constants were chosen), odd test.
    assert [q["split"] for q in queries] == ["dev", "test"] * (len(queries) // 2)
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
    assert set(light["by_split"]) == {"dev", "test"}
    assert sum(split["hybrid"]["queries"] for split in light["by_split"].values()) == len(DATA["queries"])
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


# --- the conversation set ---------------------------------------------------------------------------

CONVERSATION_SET = Path(__file__).parents[1] / "data" / "conversation_eval.json"
CONVERSATIONS = json.loads(CONVERSATION_SET.read_text(encoding="utf-8"))


def test_the_conversation_set_has_what_the_issue_asks():
    from memoryboard.evaluation.retrieval import conversation_expected, conversation_items, validate_conversation_set

    validate_conversation_set(CONVERSATIONS)
    conversations = {c["id"]: c for c in CONVERSATIONS["conversations"]}
    queries = CONVERSATIONS["queries"]
    assert len(conversations) >= 10 and len(queries) >= 400
    assert {c["language"] for c in conversations.values()} == {"en", "zh", "mixed"}
    for conversation in conversations.values():
        assert len(conversation["sessions"]) >= 5 and len(conversation["speakers"]) == 2
        dates = [s["date"] for s in conversation["sessions"]]
        assert dates == sorted(dates) and len({d[:4] for d in dates}) == 2  # dated, across two years
        turns = conversation_items(conversation, "turns")
        assert all(re.match(r"^\[\d{4}-\d{2}-\d{2}\] \S+: ", t["content"]) for t in turns)
        assert all(o["validFrom"] and o["evidence"] for o in conversation["observations"])
    kinds = {kind: [q for q in queries if q["kind"] == kind] for kind in ("single", "multi", "time", "paraphrase")}
    assert all(len(found) >= 50 for found in kinds.values()), {k: len(v) for k, v in kinds.items()}
    assert all(len(q["evidence"]) >= 2 for q in kinds["multi"])
    assert {q["lang"] for q in queries} == {"en", "zh"}
    assert any("上个月" in q["query"] for q in kinds["time"]) and any("last month" in q["query"] for q in kinds["time"])
    # Fixed split by conversation; every question's evidence is in both stores.
    assert {c["split"] for c in conversations.values()} == {"dev", "test"}
    for q in queries:
        conversation = conversations[q["conversation"]]
        assert q["split"] == conversation["split"]
        assert conversation_expected(q, conversation, "observations")
    # A paraphrase shares no keyword token with its evidence turns (speaker included) or their observations.
    for q in kinds["paraphrase"]:
        conversation = conversations[q["conversation"]]
        texts = [t["content"] for t in conversation_items(conversation, "turns") if t["id"] in q["evidence"]]
        texts += [o["content"] for o in conversation["observations"] if set(o["evidence"]) & set(q["evidence"])]
        tokens = _builder().set_tokens
        shared = set(tokens(q["query"])) & set(tokens(" ".join(t.split("] ", 1)[-1] for t in texts)))
        assert not shared, (q["query"], shared)


def test_the_generator_writes_the_committed_file(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_conversation_eval", CONVERSATION_SET.parent / "build_conversation_eval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "OUT", tmp_path / "out.json")
    module.main()
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == CONVERSATION_SET.read_text(encoding="utf-8")


def _small_conversation_set() -> dict:
    conversation = CONVERSATIONS["conversations"][1]
    queries = [q for q in CONVERSATIONS["queries"] if q["conversation"] == conversation["id"]][:12]
    return {"conversations": [conversation], "queries": queries}


@pytest.mark.django_db
def test_the_conversation_evaluation_reports_every_mode_and_writes_nothing():
    from memoryboard.llm.embeddings import HashingEmbedder
    from memoryboard.evaluation.retrieval import CONVERSATION_MODES, conversation_evaluate

    small = _small_conversation_set()
    report = conversation_evaluate(data=small, embedder=HashingEmbedder())
    split = small["conversations"][0]["split"]
    stores = report["by_split"][split]
    assert set(stores) == {"turns", "observations"}
    for kinds in stores.values():
        assert kinds["all"]["search"]["queries"] == len(small["queries"])
        assert set(kinds["all"]) == set(CONVERSATION_MODES)
        assert all(0 <= m["recall@10"] <= 1 for m in kinds["all"].values())
        # K = 10 both; the agent's block leaves out what is below the minimum relevance, the search does not.
        assert kinds["all"]["agent"]["recall@10"] <= kinds["all"]["search"]["recall@10"]
    assert not LongTermMemory.objects.exists()


@pytest.mark.django_db
def test_the_command_runs_both_shipped_sets_by_default(tmp_path, monkeypatch):
    from memoryboard.management.commands import memory_eval

    bilingual = tmp_path / "bilingual.json"
    bilingual.write_text(json.dumps({"items": DATA["items"][:5], "queries": [
        q for q in DATA["queries"] if q["expected"][0] in {i["id"] for i in DATA["items"][:5]}]}), encoding="utf-8")
    conversations = tmp_path / "conversations.json"
    conversations.write_text(json.dumps(_small_conversation_set()), encoding="utf-8")
    monkeypatch.setattr(memory_eval, "NAMED", {"bilingual": bilingual, "team": conversations})
    out = StringIO()
    call_command("memory_eval", "--no-progress", "--embedder", "hashing", stdout=out)
    text = out.getvalue()
    assert "R@1" in text and "evidence recall@10" in text and "observations" in text and "rrf" in text
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"conversations": [{"id": "c", "sessions": []}],
                                      "queries": [{"query": "q", "conversation": "c", "evidence": ["t"]}]}), encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape("conversations[0].sessions")):
        call_command("memory_eval", str(bad), "--no-progress")
