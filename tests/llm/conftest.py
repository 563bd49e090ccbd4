from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from memoryboard.llm.openai_client import make_client
from tests.fakes.openai_server import FakeOpenAI

# Short enough to keep the timeout tests fast, long enough for a loaded CI machine.
CLIENT_TIMEOUT = 0.5


@pytest.fixture
def client(openai_server: FakeOpenAI) -> Iterator[openai.OpenAI]:
    client = make_client(base_url=openai_server.base_url, api_key="test-key", timeout=CLIENT_TIMEOUT, max_retries=0)
    yield client
    client.close()
