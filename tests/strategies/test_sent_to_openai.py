"""Every strategy's output, sent with the real ``openai`` client to the fake server that validates messages as
the OpenAI API does (tool pairing, roles, content types): a strategy that splits a unit fails here."""

from __future__ import annotations

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryboard.strategies import CONTEXT_STRATEGIES, apply_context
from tests.fakes.openai_server import FakeOpenAI

from .helpers import RecordingSummarizer
from .test_agent_traces import params_for
from .traces import openai_trace


@pytest.fixture(scope="module")
def client():
    server = FakeOpenAI().start()
    yield openai.OpenAI(base_url=server.base_url, api_key="k", timeout=5, max_retries=0), server
    server.stop()


def test_the_fake_server_refuses_what_openai_refuses(client):
    api, _server = client
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c1", "content": "r"}]
    with pytest.raises(openai.BadRequestError, match="preceeding message with 'tool_calls'"):
        api.chat.completions.create(model="m", messages=orphan)
    unanswered = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "user", "content": "?"}]
    with pytest.raises(openai.BadRequestError, match="did not have response messages: c1"):
        api.chat.completions.create(model="m", messages=unanswered)
    with pytest.raises(openai.BadRequestError, match="content"):
        api.chat.completions.create(model="m", messages=[{"role": "user", "content": None}])
    with pytest.raises(openai.BadRequestError, match="content part"):
        api.chat.completions.create(model="m", messages=[{"role": "tool", "tool_call_id": "x",
                                                          "content": [{"type": "image_url", "image_url": {}}]}])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=openai_trace(pending=False).filter(bool), name=st.sampled_from(CONTEXT_STRATEGIES), data=st.data())
def test_every_strategy_output_is_accepted_by_the_openai_api(client, trace, name, data):
    api, _server = client
    params = data.draw(params_for[name])
    result = apply_context(name, trace, params, summarizer=RecordingSummarizer("S"), keep_system=True)
    out = result.output()
    if not out:
        return  # an empty request is refused for being empty, not for its shape
    api.chat.completions.create(model="fake-model", messages=out)
