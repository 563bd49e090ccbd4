from __future__ import annotations

import copy
import dataclasses
import pickle
from types import SimpleNamespace

import pytest

from memoryboard.strategies import (
    Message,
    Role,
    StrategyInputError,
    estimated_tokens,
    to_message,
    to_messages,
    total_tokens,
)


@pytest.mark.parametrize("raw", ["user", "USER", "User", " user ", Role.USER])
def test_role_parse_any_case(raw):
    assert Role.parse(raw) is Role.USER


@pytest.mark.parametrize("raw", ["human", "", None, 3])
def test_role_parse_rejects_unknown_naming_value(raw):
    with pytest.raises(StrategyInputError) as err:
        Role.parse(raw)
    assert err.value.field == "role"
    assert repr(raw) in err.value.message


def test_message_is_frozen_including_metadata():
    m = Message(Role.USER, "hi", 1, {"tags": ["a"], "nested": {"k": 1}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.content = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        m.metadata["tags"] = []  # type: ignore[index]
    with pytest.raises(TypeError):
        m.metadata["nested"]["k"] = 2  # type: ignore[index]
    assert m.metadata["tags"] == ("a",)
    assert m.to_dict() == {"role": "user", "content": "hi", "metadata": {"tags": ["a"], "nested": {"k": 1}}}


def test_message_metadata_is_a_copy_of_the_caller_dict():
    meta = {"a": 1}
    m = Message(Role.USER, "hi", metadata=meta)
    meta["a"] = 2
    assert m.metadata["a"] == 1


def test_message_survives_deepcopy_and_pickle():
    m = Message(Role.TOOL, "out", 5, {"tool_calls": [{"id": "c1"}]})
    assert copy.deepcopy(m) == m
    assert pickle.loads(pickle.dumps(m)) == m


def test_to_message_from_json_dict():
    m = to_message({"role": "assistant", "content": "yo", "id": 7, "metadata": {"x": 1}})
    assert m == Message(Role.ASSISTANT, "yo", 7, {"x": 1})


def test_to_message_from_row_like_object():
    row = SimpleNamespace(role="TOOL", content="result", id=3, metadata=None, conversation_id="c")
    assert to_message(row) == Message(Role.TOOL, "result", 3)


def test_to_message_passes_messages_through():
    m = Message(Role.USER, "x")
    assert to_message(m) is m


def test_to_messages_mixed_and_does_not_copy_messages():
    m = Message(Role.USER, "x")
    out = to_messages([m, {"role": "system", "content": "s"}])
    assert out[0] is m and out[1].role is Role.SYSTEM
    assert isinstance(out, tuple)


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"content": "x"}, "messages[1].role"),
        ({"role": "user"}, "messages[1].content"),
        ({"role": "robot", "content": "x"}, "messages[1].role"),
        ({"role": "user", "content": 5}, "messages[1].content"),
        ({"role": "user", "content": "x", "id": "7"}, "messages[1].id"),
        ({"role": "user", "content": "x", "id": True}, "messages[1].id"),
        ({"role": "user", "content": "x", "metadata": [1]}, "messages[1].metadata"),
        (42, "messages[1]"),
        (SimpleNamespace(content="x"), "messages[1].role"),
    ],
)
def test_to_messages_errors_name_the_field_with_index(item, field):
    with pytest.raises(StrategyInputError) as err:
        to_messages([{"role": "user", "content": "ok"}, item])
    assert err.value.field == field
    assert str(err.value).startswith(field + ": ")


def test_to_messages_rejects_non_list():
    with pytest.raises(StrategyInputError) as err:
        to_messages({"role": "user", "content": "x"})
    assert err.value.field == "messages"


def test_token_formula():
    assert estimated_tokens("x" * 25) == 14.0
    assert estimated_tokens(Message(Role.USER, "")) == 4.0
    assert total_tokens([Message(Role.USER, "x" * 5), "y" * 10]) == 14.0
    assert total_tokens([]) == 0


def test_metadata_is_json_serializable_as_is():
    import json

    m = Message(Role.SYSTEM, "s", 1, {"summary": True, "summarized_ids": [1, 2], "nested": {"k": [3]}})
    assert json.loads(json.dumps(m.metadata)) == {"summary": True, "summarized_ids": [1, 2], "nested": {"k": [3]}}
    assert dict(m.metadata)["summarized_ids"] == (1, 2)
