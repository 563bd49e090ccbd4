"""Hypothesis generators of agent traces as agents send them: OpenAI and Anthropic, with parallel tool calls,
content parts and blocks, null contents and unknown fields."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
tool_names = st.sampled_from(["search", "get_weather", "memory_save", "run_sql"])
extra_fields = st.dictionaries(st.sampled_from(["x_trace", "metadata_x", "annotations"]), st.integers() | text, max_size=1)


@st.composite
def _openai_content(draw, role: str) -> Any:
    kind = draw(st.sampled_from(["str", "parts"]))
    if kind == "str":
        return draw(text)
    parts = [{"type": "text", "text": draw(text)} for _ in range(draw(st.integers(1, 2)))]
    if role == "user" and draw(st.booleans()):
        parts.append({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}})
    return parts


@st.composite
def openai_trace(draw, *, pending: bool = True) -> list[dict[str, Any]]:
    """A ReAct trace: optional system prompt, then user turns, assistant answers and tool exchanges."""
    out: list[dict[str, Any]] = []
    counter = 0
    if draw(st.booleans()):
        out.append({"role": "system", "content": draw(text) or "be brief"})
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools"]))
        if kind == "user":
            out.append({"role": "user", "content": draw(_openai_content("user")), **draw(extra_fields)})
        elif kind == "assistant":
            out.append({"role": "assistant", "content": draw(_openai_content("assistant"))})
        else:
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append({"id": f"call_{counter}", "type": "function", "function": {
                    "name": draw(tool_names), "arguments": json.dumps({"q": draw(text)})}})
            out.append({"role": "assistant", "content": draw(st.none() | text), "tool_calls": calls,
                        **draw(extra_fields)})
            order = draw(st.permutations(calls))
            for call in order:
                result: dict[str, Any] = {"role": "tool", "tool_call_id": call["id"],
                                          "content": draw(_openai_content("tool"))}
                if draw(st.booleans()):
                    result["name"] = call["function"]["name"]
                out.append(result)
    if pending and draw(st.booleans()):
        counter += 1
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{counter}", "type": "function", "function": {"name": "search", "arguments": "{}"}}]})
    return out


@st.composite
def anthropic_trace(draw, *, pending: bool = True) -> list[dict[str, Any]]:
    """Anthropic turns: text or blocks, tool_use blocks in assistant turns, tool_result blocks in user turns."""
    out: list[dict[str, Any]] = []
    counter = 0
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools"]))
        if kind == "user":
            content: Any = draw(text) if draw(st.booleans()) else [{"type": "text", "text": draw(text)}]
            if isinstance(content, list) and draw(st.booleans()):
                content.append({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}})
            out.append({"role": "user", "content": content})
        elif kind == "assistant":
            out.append({"role": "assistant", "content": draw(text) if draw(st.booleans())
                        else [{"type": "text", "text": draw(text)}]})
        else:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": draw(text)}] if draw(st.booleans()) else []
            ids = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                ids.append(f"toolu_{counter}")
                blocks.append({"type": "tool_use", "id": ids[-1], "name": draw(tool_names), "input": {"q": draw(text)}})
            out.append({"role": "assistant", "content": blocks})
            results = [
                {"type": "tool_result", "tool_use_id": i,
                 "content": draw(text) if draw(st.booleans()) else [{"type": "text", "text": draw(text)}],
                 **({"is_error": True} if draw(st.booleans()) else {})}
                for i in draw(st.permutations(ids))
            ]
            if draw(st.booleans()):
                results.append({"type": "text", "text": draw(text)})
            out.append({"role": "user", "content": results})
    if pending and draw(st.booleans()):
        counter += 1
        out.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{counter}", "name": "search", "input": {}}]})
    return out


def calls_and_results(messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The tool call ids and the result ids of a trace in either format, in order."""
    calls: list[str] = []
    results: list[str] = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            calls.append(call["id"])
        if m.get("role") == "tool" and m.get("tool_call_id"):
            results.append(m["tool_call_id"])
        if isinstance(m.get("content"), list):
            for block in m["content"]:
                if block.get("type") == "tool_use":
                    calls.append(block["id"])
                elif block.get("type") == "tool_result":
                    results.append(block["tool_use_id"])
    return calls, results


def assert_units_whole(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    """No result without its call, no call without its results (unless the input had none either), and
    every result after its call."""
    in_calls, in_results = calls_and_results(before)
    out_calls, out_results = calls_and_results(after)
    assert set(out_results) <= set(out_calls), "a tool result whose call is gone"
    answered_in = set(in_results)
    for call_id in out_calls:
        if call_id in answered_in:
            assert call_id in out_results, f"the results of {call_id} are gone"
    seen: set[str] = set()
    for m in after:
        _calls, res = calls_and_results([m])
        assert set(res) <= seen, "a result before its call"
        seen.update(_calls)
