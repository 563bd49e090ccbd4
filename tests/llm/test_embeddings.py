from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryboard.llm.embeddings import Embedder, HashingEmbedder, OpenAIEmbedder
from memoryboard.llm.errors import LLMError


REPO_ROOT = Path(__file__).resolve().parents[2]


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# --- HashingEmbedder -------------------------------------------------------------------------


def test_hashing_shape_dtype_name():
    embedder = HashingEmbedder()
    vectors = embedder.embed(["hello world", "你好世界", ""])
    assert isinstance(embedder, Embedder)
    assert embedder.name == "hashing-ngram-384" and embedder.dim == 384 and embedder.is_offline
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert not vectors[2].any()  # empty text: zero vector
    assert HashingEmbedder().embed([]).shape == (0, 384)


def test_hashing_is_deterministic_across_processes():
    texts = ["I prefer concise answers", "用户是Java后端开发者"]
    here = HashingEmbedder().embed(texts)
    code = (
        "import sys, json; from memoryboard.llm.embeddings import HashingEmbedder;"
        f"print(json.dumps(HashingEmbedder().embed({texts!r}).tolist()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": ""}, cwd=REPO_ROOT)
    assert np.allclose(here, np.array(json.loads(out.stdout), dtype=np.float32))


@pytest.mark.parametrize(
    ("query", "similar", "unrelated"),
    [
        ("I am a Java backend developer", "Java backend developer", "The weather is sunny in Paris today"),
        ("用户是Java后端开发者", "用户从事后端开发，主要用Java", "今天天气很好，我们去公园散步"),
        ("用户喜欢喝绿茶", "喜欢喝茶", "明天要去机场接朋友"),
        ("prefers code examples in answers", "likes answers with code examples", "booked a flight to Tokyo"),
    ],
)
def test_hashing_similar_texts_are_closer(query, similar, unrelated):
    q, s, u = HashingEmbedder().embed([query, similar, unrelated])
    assert cos(q, s) > cos(q, u) + 0.1


def test_hashing_is_case_insensitive():
    a, b = HashingEmbedder().embed(["Python Developer", "python developer"])
    assert cos(a, b) == pytest.approx(1.0, abs=1e-6)


def test_hashing_rejects_a_single_string():
    with pytest.raises(TypeError):
        HashingEmbedder().embed("text")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=200), max_size=5))
def test_hashing_rows_are_unit_or_zero(texts):
    vectors = HashingEmbedder(dim=64).embed(texts)
    assert vectors.shape == (len(texts), 64)
    norms = np.linalg.norm(vectors, axis=1)
    assert np.all((np.abs(norms - 1) < 1e-4) | (norms == 0))


# --- OpenAIEmbedder ---------------------------------------------------------------------------


def test_openai_embedder_normalizes_and_keeps_order(client, openai_server):
    embedder = OpenAIEmbedder(client, "fake-embedding")
    texts = ["alpha", "beta", "", "用户喜欢喝茶"]

    vectors = embedder.embed(texts)

    assert vectors.shape == (4, openai_server.embedding_dim) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    expected = HashingEmbedder(dim=openai_server.embedding_dim).embed(["alpha", "beta", "用户喜欢喝茶"])
    assert np.allclose(vectors[[0, 1, 3]], expected, atol=1e-5)
    assert openai_server.embedding_requests()[0]["input"][2] == " "  # empty strings are not sent
    assert embedder.dim == openai_server.embedding_dim
    (body,) = openai_server.embedding_requests()
    assert body["model"] == "fake-embedding" and "dimensions" not in body


def test_openai_embedder_batches(client, openai_server):
    embedder = OpenAIEmbedder(client, "fake-embedding", batch_size=256)
    vectors = embedder.embed([f"text {i}" for i in range(600)])
    assert vectors.shape == (600, openai_server.embedding_dim)
    assert [len(body["input"]) for body in openai_server.embedding_requests()] == [256, 256, 88]
    assert np.allclose(vectors[599], HashingEmbedder(dim=openai_server.embedding_dim).embed(["text 599"])[0], atol=1e-5)


def test_openai_embedder_requested_dimension(client, openai_server):
    embedder = OpenAIEmbedder(client, "fake-embedding", dim=32)
    assert embedder.dim == 32
    assert embedder.embed(["x"]).shape == (1, 32)
    assert openai_server.embedding_requests()[0]["dimensions"] == 32


def test_openai_embedder_probes_unknown_dimension_once(client, openai_server):
    embedder = OpenAIEmbedder(client, "fake-embedding")
    assert embedder.known_dim is None
    assert embedder.dim == openai_server.embedding_dim
    assert embedder.dim == openai_server.embedding_dim
    assert len(openai_server.requests) == 1
    assert OpenAIEmbedder(client, "text-embedding-3-small").dim == 1536  # known: no request
    assert len(openai_server.requests) == 1


def test_openai_embedder_empty_input_makes_no_request(client, openai_server):
    assert OpenAIEmbedder(client, "m", dim=8).embed([]).shape == (0, 8)
    assert openai_server.requests == []


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("timeout", "timeout"), ("http500", "HTTP 500"), ("malformed", "malformed response"),
     ("empty_choices", "empty response")],
)
def test_openai_embedder_faults(client, openai_server, fault, reason):
    openai_server.push_fault(fault)
    with pytest.raises(LLMError) as info:
        OpenAIEmbedder(client, "fake-embedding").embed(["a", "b"])
    assert info.value.reason == reason


# --- the default offline model --------------------------------------------------------------------


def test_the_default_model_is_multilingual_and_normalized(use_embedder):
    from memoryboard.llm.embeddings import UniversalSentenceEncoder

    assert isinstance(use_embedder, UniversalSentenceEncoder) and use_embedder.dim == 512
    job, food, question = use_embedder.embed(["用户是Java后端开发者", "User likes green tea", "what does the user do for a living?"])
    assert np.allclose(np.linalg.norm([job, food, question], axis=1), 1.0, atol=1e-5)
    assert question @ job > question @ food
    assert use_embedder.embed([]).shape == (0, 512)
    with pytest.raises(TypeError):
        use_embedder.embed("text")


def test_the_embedder_is_its_own_setting(settings, openai_server):
    from memoryboard.checks import check_embedder
    from memoryboard.llm import factory

    settings.OPENAI_BASE_URL = openai_server.base_url  # an online chat model does not change the embedder
    settings.MEMORYBOARD_EMBEDDER = "hashing"
    assert isinstance(factory.get_embedder(), HashingEmbedder)
    settings.MEMORYBOARD_EMBEDDER = "openai"
    assert isinstance(factory.get_embedder(), OpenAIEmbedder)
    settings.MEMORYBOARD_EMBEDDER = "bert"
    assert [e.id for e in check_embedder()] == ["memoryboard.E130"]
