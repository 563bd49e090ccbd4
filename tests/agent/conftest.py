from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast user fixtures


AGENTS_YAML = """
agent:
  defaults:
    long-term-memory: {enabled: false, namespace: default, max-items: 100, auto-extract: true,
                       auto-load: true, load-max-items: 10}
    memory-tools: false
  agents:
    chat:
      memory-tools: true
      long-term-memory: {enabled: true, namespace: chat, max-items: 200}
    quiet:
      long-term-memory: {enabled: true, namespace: quiet, auto-extract: false, auto-load: false}
    plain: {}
"""


@pytest.fixture(autouse=True)
def agents_yaml(settings, tmp_path):
    """A known agents.yaml: chat (memory + tools), quiet (memory, no auto-load/extract), plain (no memory)."""
    from memoryboard.agents_config import reset_agents_config

    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS_YAML, encoding="utf-8")
    settings.MEMORYBOARD_AGENTS_FILE = str(path)
    reset_agents_config()
    yield path
    reset_agents_config()


@pytest.fixture
def api(alice):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(alice)
    return client


@pytest.fixture(autouse=True)
def _default_embedder(use_embedder):
    """Agent tests run on the default offline model (loaded once per test process)."""
    return use_embedder
