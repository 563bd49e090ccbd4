"""``manage.py memory_eval --suite extraction``: the development set by cross-validation (the classifier was
trained on it), another set side by side with the gap, and the online extractor at any endpoint."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from memoryboard.evaluation.extraction import set_fingerprint, trained_on
from memoryboard.llm.statement_model import shipped_statement_model

DEV = settings.BASE_DIR / "tests" / "data" / "dev" / "extraction.json"

# A small set in the format of tests/data/blind/FORMATS.md (not the blind set: tests never read it).
SMALL = {"items": [
    {"id": "s1", "lang": "en", "channel": "chat", "text": "I'm a nurse in Leeds and I have two cats.",
     "label": "keep", "category": "several", "facts": ["The user is a nurse in Leeds.", "The user has two cats."]},
    {"id": "s2", "lang": "zh", "channel": "chat", "text": "我今年三十五岁。", "label": "keep", "category": "statement",
     "facts": ["用户三十五岁。"]},
    {"id": "s3", "lang": "en", "channel": "api", "text": "The user moved to Ghent.", "label": "keep",
     "category": "third_person", "facts": ["The user lives in Ghent."]},
    {"id": "s4", "lang": "en", "channel": "chat", "text": "What's the capital of Peru?", "label": "skip",
     "category": "question", "facts": []},
    {"id": "s5", "lang": "en", "channel": "chat", "text": "my wifi password is sunflower77, I work from home",
     "label": "keep", "category": "statement", "facts": ["The user works from home."], "secret": "sunflower77"},
    {"id": "s6", "lang": "zh", "channel": "chat", "text": "帮我写一首关于秋天的诗", "label": "skip", "category": "request",
     "facts": []},
]}


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "extraction.json"
    path.write_text(json.dumps(SMALL, ensure_ascii=False), encoding="utf-8")
    return path


def run(*args) -> str:
    out = StringIO()
    call_command("memory_eval", "--suite", "extraction", "--no-progress", *map(str, args), stdout=out)
    return out.getvalue()


def test_the_shipped_classifier_names_the_development_set_it_was_trained_on():
    dev = json.loads(DEV.read_text(encoding="utf-8"))
    model = shipped_statement_model()
    assert trained_on(dev, model) and model.info["trained_on"]["fingerprint"] == set_fingerprint(dev)
    assert model.info["trained_on"]["path"] == "tests/data/dev/extraction.json"


def test_dev_by_cross_validation_meets_the_targets_beside_another_set(small):
    report = json.loads(run(DEV, small, "--format", "json"))
    dev, other = report[str(DEV)], report[str(small)]
    assert dev["method"].startswith("5-fold cross-validation")
    assert dev["overall"]["recall"] >= 0.9 and dev["overall"]["precision"] >= 0.9, dev["failures"]
    assert dev["overall"]["secrets_leaked"] == 0
    assert other["method"] == "the extractor as shipped"
    assert other["overall"]["recall"] == 1.0 and other["overall"]["precision"] == 1.0
    assert other["overall"]["coverage"] == 1.0 and other["overall"]["secrets_leaked"] == 0
    assert set(other["by_language"]) == {"en", "zh"} and set(other["by_channel"]) == {"chat", "api"}


def test_the_table_shows_both_sets_and_the_gap(small, tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"items": SMALL["items"][:4]}), encoding="utf-8")
    text = run(small, other)
    assert "extraction suite, extractor statements (offline)" in text
    assert "extraction" in text and "other" in text and "gap" in text
    assert "recall" in text and "secrets_leaked" in text and "language zh" in text and "channel api" in text


def test_the_online_extractor_at_an_endpoint(small, openai_server):
    replies = {
        "I'm a nurse": [{"type": "FACT", "content": "The user is a nurse in Leeds"},
                        {"type": "FACT", "content": "The user has two cats"}],
        "三十五": [{"type": "FACT", "content": "用户三十五岁"}],
        "Ghent": [{"type": "FACT", "content": "The user lives in Ghent"}],
        "sunflower77": [{"type": "FACT", "content": "The user's wifi password is sunflower77"}],
        "秋天": [],
    }
    for message in SMALL["items"]:  # in order; the question is filtered before any call
        for key, items in replies.items():
            if key in message["text"]:
                openai_server.push_reply(content=json.dumps(items, ensure_ascii=False))
    report = json.loads(run(small, "--endpoint", openai_server.base_url, "--model", "fake-chat", "--api-key", "k",
                            "--format", "json"))[str(small)]
    assert report["extractor"] == "llm:fake-chat"
    assert report["overall"]["recall"] == 0.75 and report["overall"]["secrets_leaked"] == 0
    assert report["failures"]["missed"] == ["s5"]  # its only item held the password: withheld
    requests = openai_server.requests
    assert len(openai_server.chat_requests()) == 5
    assert {r["body"]["model"] for r in requests} == {"fake-chat"}
    assert {r["headers"]["authorization"] for r in requests} == {"Bearer k"}
    text = run(small, "--endpoint", openai_server.base_url, "--model", "fake-chat")
    assert "extractor llm:fake-chat" in text and "errors" in text  # the fake's default answer is no JSON


def test_bad_input_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"items": [{"id": "a", "text": "hi", "label": "maybe"}]}), encoding="utf-8")
    with pytest.raises(CommandError, match=r"items\[0\]\.label"):
        run(bad)
    with pytest.raises(CommandError, match="--endpoint"):  # the retrieval suite has no model to ask
        call_command("memory_eval", "--suite", "retrieval", "--endpoint", "http://127.0.0.1:9/v1")
