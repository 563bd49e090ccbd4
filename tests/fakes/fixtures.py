"""pytest fixtures around :class:`FakeOpenAI`; ``from tests.fakes.fixtures import *`` in a conftest.

- ``fake_openai`` (session): the running server.
- ``openai_server`` (function): the same server, reset before and after the test.
- ``openai_settings`` (function, needs pytest-django): Django settings pointed at the server
  (timeout 1 s, no retries) with the model caches reset; yields the server.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAI

__all__ = ["fake_openai", "openai_server", "openai_settings"]


@pytest.fixture(scope="session")
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def openai_server(fake_openai: FakeOpenAI) -> Iterator[FakeOpenAI]:
    fake_openai.reset()
    yield fake_openai
    fake_openai.reset()


@pytest.fixture
def openai_settings(settings, openai_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    from memoryboard.llm.factory import reset_models

    settings.OPENAI_BASE_URL = openai_server.base_url
    settings.OPENAI_API_KEY = "test-key"
    settings.MEMORYBOARD_EMBEDDER = "openai"
    settings.OPENAI_TIMEOUT_SECONDS = 1
    settings.OPENAI_MAX_RETRIES = 0
    reset_models()
    yield openai_server
    reset_models()
