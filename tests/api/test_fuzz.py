"""Property tests: no generated request makes the API answer 500."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.django_db

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
roles = st.sampled_from(["user", "USER", "assistant", "system", "tool", "Tool", "wizard", "", None, 3])
messages = st.lists(
    st.fixed_dictionaries({}, optional={"role": roles, "content": st.text(max_size=50) | json_values,
                                        "id": json_values, "metadata": json_values}) | json_values,
    max_size=8,
)
param_names = st.sampled_from(["keep_first", "keep_last", "threshold", "max_tokens", "steps", "keep_latest",
                               "keep_roles", "assistant_keywords", "keep_tool", "min_length",
                               "summarize.threshold", "trim", "x"])
params = st.dictionaries(param_names, json_values | st.integers(min_value=-5, max_value=50), max_size=4) | json_values
names = st.sampled_from(["trim", "SUMMARIZE", "sliding_window", "composite", "Sliding-Window", "delete", "filter",
                         "nope", "%20", "..", "TRIM%00"])


def _no_500(response):
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"}


@FUZZ
@given(name=names, msgs=messages, prm=params, extra=st.dictionaries(st.text(max_size=8), json_values, max_size=2))
def test_context_apply_never_500(as_user, alice, name, msgs, prm, extra):
    body = {"messages": msgs, "params": prm, **extra}
    _no_500(as_user(alice).post(f"/api/v1/strategies/context/{name}/apply", body, format="json"))


@FUZZ
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_raw_bodies_never_500(as_user, alice, raw):
    client = as_user(alice)
    _no_500(client.generic("POST", "/api/v1/strategies/context/trim/apply", raw, content_type="application/json"))


@FUZZ
@given(name=names, body=st.fixed_dictionaries({}, optional={"conversation_id": json_values | st.just("c1"),
                                                             "params": params,
                                                             "expected_delete_ids": json_values}))
def test_memory_strategies_never_500(as_user, superuser, make_conversation, name, body):
    from memoryboard.models import ChatMessage

    if not ChatMessage.objects.filter(conversation_id="c1").exists():
        make_conversation(superuser, 6, conversation_id="c1")
    client = as_user(superuser)
    _no_500(client.post(f"/api/v1/strategies/memory/{name}/plan", body, format="json"))
    _no_500(client.post(f"/api/v1/strategies/memory/{name}/apply", body, format="json"))


@FUZZ
@given(body=json_values | st.dictionaries(st.sampled_from(["content", "type", "namespace", "archived"]), json_values))
def test_memory_patch_never_500(as_user, alice, make_memory, body):
    from memoryboard.models import LongTermMemory

    memory = LongTermMemory.objects.first() or make_memory(alice, "fuzzed")
    _no_500(as_user(alice).patch(f"/api/v1/memories/{memory.pk}/", json.dumps(body), content_type="application/json"))


@FUZZ
@given(query=st.dictionaries(st.sampled_from(["q", "k", "limit", "offset", "user", "agent", "type", "source",
                                              "archived"]), st.text(max_size=20), max_size=5),
       path=st.sampled_from(["/api/v1/memories/", "/api/v1/memories/search/", "/api/v1/conversations/"]))
def test_list_and_search_params_never_500(as_user, alice, query, path):
    _no_500(as_user(alice).get(path, query))
