from __future__ import annotations

import os

import numpy as np
import pytest

if "DJANGO_SETTINGS_MODULE" not in os.environ:  # run with -p no:django
    pytest.skip("needs pytest-django", allow_module_level=True)

from memoryboard.llm import factory
from memoryboard.llm.chat import OpenAIChatModel
from memoryboard.llm.offline_chat import OfflineChatModel
from memoryboard.llm.embeddings import HashingEmbedder, OpenAIEmbedder, UniversalSentenceEncoder
from memoryboard.llm.extraction import ExtractedItem, LLMExtractor, OfflineExtractor
from memoryboard.llm.summarizer import OpenAISummarizer
from memoryboard.strategies.errors import SummarizerError
from memoryboard.strategies.summarizer import OfflineSummarizer


@pytest.fixture
def offline(settings):
    settings.OPENAI_BASE_URL = ""
    factory.reset_models()
    yield
    factory.reset_models()


def test_offline_by_default(offline):
    assert isinstance(factory.get_summarizer(), OfflineSummarizer)
    assert isinstance(factory.get_embedder(), HashingEmbedder)
    assert isinstance(factory.get_chat_model(), OfflineChatModel)
    assert isinstance(factory.get_extractor(), OfflineExtractor)
    status = factory.models_status()
    assert status["offline"] is True and status["any_offline"] is True
    assert status["base_url"] == ""
    assert status["embedder"] == {"name": "hashing-ngram-384", "offline": True, "dim": 384}
    assert status["chat"] == {"name": "offline", "offline": True}
    assert status["summarizer"]["offline"] and status["extractor"]["offline"]


def test_models_are_cached_singletons(offline):
    assert factory.get_embedder() is factory.get_embedder()
    assert factory.get_chat_model() is factory.get_chat_model()
    before = factory.get_embedder()
    factory.reset_models()
    assert factory.get_embedder() is not before


def test_online_when_settings_point_at_the_server(openai_settings, settings):
    settings.OPENAI_CHAT_MODEL = "fake-chat"
    settings.OPENAI_EMBEDDING_MODEL = "fake-embedding"

    summarizer = factory.get_summarizer()
    assert isinstance(summarizer, OpenAISummarizer)
    assert isinstance(factory.get_embedder(), OpenAIEmbedder)
    assert isinstance(factory.get_chat_model(), OpenAIChatModel)
    assert isinstance(factory.get_extractor(), LLMExtractor)
    assert factory.get_extractor().chat_model is factory.get_chat_model()

    status = factory.models_status()
    assert openai_settings.requests == []  # the status makes no request
    assert status["offline"] is False and status["any_offline"] is False
    assert status["base_url"] == openai_settings.base_url
    assert status["chat"] == {"name": "fake-chat", "offline": False}
    assert status["embedder"] == {"name": "fake-embedding", "offline": False, "dim": None}

    openai_settings.push_reply(content="summary!")
    assert summarizer.summarize("text", instruction="summarize") == "summary!"
    assert factory.get_embedder().embed(["a"]).shape == (1, openai_settings.embedding_dim)
    openai_settings.push_reply(content='[{"type": "FACT", "content": "is a dev"}]')
    assert factory.get_extractor().extract([{"role": "user", "content": "I am a dev"}]) == [
        ExtractedItem("FACT", "is a dev")
    ]
    assert [r["headers"]["authorization"] for r in openai_settings.requests] == ["Bearer test-key"] * 3


def test_online_timeout_uses_settings(openai_settings):
    openai_settings.set_fault("timeout")
    with pytest.raises(SummarizerError) as info:
        factory.get_summarizer().summarize("text", instruction="summarize")
    assert info.value.reason == "timeout"
    assert len(openai_settings.requests) == 1  # OPENAI_MAX_RETRIES=0


def test_empty_embedding_model_keeps_the_offline_embedder(openai_settings, settings):
    settings.OPENAI_EMBEDDING_MODEL = ""
    assert isinstance(factory.get_embedder(), UniversalSentenceEncoder)
    status = factory.models_status()
    assert status["offline"] is False and status["any_offline"] is True


def test_setting_change_resets_the_cache(settings, openai_server):
    settings.OPENAI_BASE_URL = ""
    assert isinstance(factory.get_chat_model(), OfflineChatModel)
    settings.OPENAI_BASE_URL = openai_server.base_url  # setting_changed clears the cache
    assert isinstance(factory.get_chat_model(), OpenAIChatModel)


def test_online_embeddings_are_normalized(openai_settings):
    vectors = factory.get_embedder().embed(["用户喜欢喝茶", "likes tea"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
