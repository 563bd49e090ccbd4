"""The one JSON guard (memoryboard.jsonguard): what it refuses, and that it names the field."""

from __future__ import annotations

import json

import pytest

from memoryboard import jsonguard as guard
from memoryboard.jsonguard import MAX_DEPTH, JSONGuardError, check_json_value, parse_json


@pytest.mark.parametrize("text,field", [
    ('{"params": {"keep_first": 1e400}}', "params.keep_first"),
    ('{"params": {"keep_first": -1e400}}', "params.keep_first"),
    ('{"a": [1, Infinity]}', "a[1]"),
    ('{"a": -Infinity}', "a"),
    ('{"a": NaN}', "a"),
    ('{"messages": [{"role": "user", "content": "x\\ud800"}]}', "messages[0].content"),
    ('{"messages": [{"role": "user", "content": "\\uDC00"}]}', "messages[0].content"),
    ('{"k\\ud800": 1}', "k\\ud800"),  # the key itself, printable in the error
    ("[" * 1200 + "]" * 1200, "[0]" * MAX_DEPTH),
    ('{"messages": ' + "[" * 100 + "]" * 100 + "}", "messages" + "[0]" * (MAX_DEPTH - 1)),
    ('{"x": ' + '{"y": ' * 70 + "1" + "}" * 70 + "}", "x" + ".y" * (MAX_DEPTH - 1)),
])
def test_refused_with_the_field_named(text, field):
    with pytest.raises(JSONGuardError) as info:
        parse_json(text)
    assert info.value.field == field
    str(info.value).encode("utf-8")  # the message itself is printable text


def test_the_prefix_names_the_form_field_and_bytes_are_utf8():
    with pytest.raises(JSONGuardError) as info:
        parse_json(b'{"keep": NaN}', field_prefix="params")
    assert info.value.field == "params.keep"
    with pytest.raises(JSONGuardError) as info:
        parse_json(b"\xff\xfe", field_prefix="params")
    assert info.value.field == "params" and "UTF-8" in info.value.message
    with pytest.raises(JSONGuardError) as info:
        parse_json('{"a": }')
    assert info.value.syntax is not None and info.value.syntax.colno == 7


def test_accepted_json_comes_back_unchanged():
    value = {"messages": [{"role": "user", "content": "😀 \\ud83d\\ude00 中文", "n": [1, 2.5, True, None]}],
             "deep": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))}
    text = json.dumps(value)
    assert parse_json(text) == value
    assert parse_json('"\\ud83d\\ude00"') == "😀"  # a surrogate pair is one character, not a lone surrogate


def test_check_json_value_for_values_parsed_elsewhere():
    check_json_value({"content": "ok", "k": 3, "x": [1.5]}, field="arguments")
    for bad, field in (({"k": float("inf")}, "arguments.k"), ({"c": "a\ud800"}, "arguments.c"),
                       ({"o": object()}, "arguments.o")):
        with pytest.raises(JSONGuardError) as info:
            check_json_value(bad, field="arguments")
        assert info.value.field == field


# A body above the size where the depth is counted on the text (the orjson path): same answers.
_PAD = "x" * 40_000


@pytest.mark.parametrize("raw, field", [
    ('{"pad": "%s", "messages": [{"content": %s1%s}]}' % (_PAD, "[" * 70, "]" * 70),
     "messages[0].content" + "[0]" * (MAX_DEPTH - 3)),
    ('{"pad": "%s", "params": {"keep_first": 1e400}}' % _PAD, "params.keep_first"),
    ('{"pad": "%s", "params": {"keep_first": NaN}}' % _PAD, "params.keep_first"),
    ('{"pad": "%s", "messages": [{"content": "a\\ud800"}]}' % _PAD, "messages[0].content"),
])
def test_large_bodies_are_refused_naming_the_field(raw, field):
    with pytest.raises(JSONGuardError) as caught:
        parse_json(raw.encode())
    assert caught.value.field == field


def test_large_bodies_keep_what_json_reads():
    raw = '{"pad": "%s", "n": 123456789012345678901234567890, "s": "[{\\"]}", "deep": %s0%s}' % (
        _PAD, "[" * 63, "]" * 63)
    value = parse_json(raw.encode())
    assert value["n"] == 123456789012345678901234567890 and value["s"] == '[{"]}'
    assert value == json.loads(raw)


@pytest.mark.parametrize("number", ["18446744073709551616", "-9223372036854775809", "1234567890123456789",
                                    "123456789012345678", "-12345678901234567890123"])
@pytest.mark.parametrize("where", ["first", "last"])
def test_large_bodies_keep_every_integer_exact(number, where):
    raw = ('{"n": %s, "pad": "%s"}' if where == "first" else '{"pad": "%s", "n": %s}') % (
        (number, _PAD) if where == "first" else (_PAD, number))
    value = parse_json(raw.encode())
    assert value["n"] == int(number) and type(value["n"]) is int


@pytest.mark.parametrize("backslashes", [1, 2, 3, 4, 5])
def test_large_bodies_count_depth_outside_strings_whatever_the_backslashes(backslashes):
    # A string holding brackets and ending in a run of backslashes: an even run ends the string at the
    # quote after it, an odd one escapes that quote. Read wrongly, the nesting after it would be hidden.
    text = "[[[{{{" + ("\\" * (backslashes // 2) + '"' if backslashes % 2 else "\\" * (backslashes // 2))
    inside = json.dumps({"pad": _PAD, "s": text, "deep": json.loads("[" * 62 + "]" * 62)})
    assert parse_json(inside.encode()) == json.loads(inside)
    too_deep = json.dumps({"pad": _PAD, "s": text, "deep": json.loads("[" * 64 + "]" * 64)})
    with pytest.raises(JSONGuardError) as caught:
        parse_json(too_deep.encode())
    assert caught.value.field == "deep" + "[0]" * (MAX_DEPTH - 1)


@pytest.mark.parametrize("block", [5, 7, 64])
@pytest.mark.parametrize("backslashes", [0, 1, 2, 3])
def test_large_bodies_are_scanned_in_blocks_with_the_same_answers(monkeypatch, block, backslashes):
    """The depth and long-number scans go block by block: a string, an escape, a bracket run or a number cut
    by a block's edge reads as in one piece."""
    text = "[[{{x" + "\\" * backslashes + ("\\\"" if backslashes % 2 else "") + "]]}}"
    fine = json.dumps({"pad": _PAD, "s": text, "n": 123456789012345678901, "deep": json.loads("[" * 62 + "]" * 62)})
    too_deep = json.dumps({"pad": _PAD, "s": text, "deep": json.loads("[" * 64 + "]" * 64)})
    monkeypatch.setattr(guard, "_BLOCK", block)
    value = parse_json(fine.encode())
    assert value == json.loads(fine) and type(value["n"]) is int
    with pytest.raises(JSONGuardError) as caught:
        parse_json(too_deep.encode())
    assert caught.value.field == "deep" + "[0]" * (MAX_DEPTH - 1)
