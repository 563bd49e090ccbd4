"""Test doubles for things outside the project (the OpenAI-compatible endpoint)."""

from tests.fakes.openai_server import FakeOpenAI

__all__ = ["FakeOpenAI"]
