"""The playground's input side on agent traces (issue 11): OpenAI and Anthropic traces pasted or uploaded
(a list, a request body, JSON Lines), tool calls shown paired with their results, the system prompt choice."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlparse

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from memoryboard.models import PlaygroundTrace

pytestmark = pytest.mark.django_db

OPENAI = [
    {"role": "system", "content": "You are a ReAct agent."},
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "18C <b>sunny</b>"},
    {"role": "tool", "tool_call_id": "c2", "content": "24C"},
    {"role": "assistant", "content": "Paris 18C, Rome 24C."},
]
ANTHROPIC_BODY = {
    "model": "claude", "system": "Be brief.",
    "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Rome"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "24C"}]},
        {"role": "assistant", "content": "24C in Rome."},
    ],
}


def paste(client, text, **extra):
    return client.post(reverse("playground"), {"messages_json": text, **extra})


def trace_of(response) -> PlaygroundTrace:
    assert response.status_code == 302, response.content.decode()[:500]
    return PlaygroundTrace.objects.get(pk=parse_qs(urlparse(response["Location"]).query)["trace"][0])


def test_openai_trace_renders_tool_calls_paired_and_collapsed(login, developer):
    client = login(developer)
    trace = trace_of(paste(client, json.dumps(OPENAI)))
    assert trace.messages == OPENAI  # kept as pasted
    page = client.get(reverse("playground"), {"trace": trace.pk}).content.decode()
    assert '<details class="tool-calls"><summary>2 tool calls: <code>get_weather</code>, <code>get_weather</code>' in page
    assert "result of get_weather (c1)" in page and "result of get_weather (c2)" in page
    assert "18C &lt;b&gt;sunny&lt;/b&gt;" in page and "<b>sunny</b>" not in page  # escaped


def test_anthropic_request_body_with_system(login, developer):
    client = login(developer)
    trace = trace_of(paste(client, json.dumps(ANTHROPIC_BODY)))
    assert trace.messages[0] == {"role": "system", "content": "Be brief."}
    assert trace.messages[1:] == ANTHROPIC_BODY["messages"]
    page = client.get(reverse("playground"), {"trace": trace.pk}).content.decode()
    assert "result of get_weather (t1)" in page


def test_json_lines_and_upload(login, developer):
    client = login(developer)
    lines = "\n".join(json.dumps(m) for m in OPENAI) + "\n"
    assert trace_of(paste(client, lines)).messages == OPENAI
    upload = SimpleUploadedFile("trace.jsonl", lines.encode(), content_type="application/x-ndjson")
    response = client.post(reverse("playground"), {"messages_json": "", "messages_file": upload})
    assert trace_of(response).messages == OPENAI


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        (json.dumps([{"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]}]),
         "messages[0].tool_calls[0].id"),
        ('{"role": "user", "content": "a"}\n{"role": "user", "content": }', "JSON Lines: line 2"),
        (json.dumps({"system": "x", "messages": [{"role": "user", "content": "hi"}]}), "system"),
    ],
)
def test_bad_traces_name_the_field(login, developer, text, fields):
    response = paste(login(developer), text)
    assert response.status_code == 400
    assert fields in response.content.decode()


def test_named_format_is_checked(login, developer):
    body = json.dumps(ANTHROPIC_BODY["messages"])
    response = paste(login(developer), body, format="openai")
    assert response.status_code == 400 and "messages[1].content[0]" in response.content.decode()


def test_keep_the_system_prompt_is_a_visible_choice(login, developer):
    client = login(developer)
    trace = trace_of(paste(client, json.dumps(OPENAI)))
    query = {"trace": trace.pk, "c-trim-keep_first": "0", "c-trim-keep_last": "1"}
    page = client.get(reverse("playground"), query).content.decode()
    assert re.search(r'<input type="checkbox" name="keep_system" value="1" checked>', page)
    kept = re.search(r'id="col-trim"[^>]*data-kept="([^"]*)"', page).group(1)
    assert kept == "0,5"  # the system prompt, then the last message
    page = client.get(reverse("playground"), {**query, "keep_system": "0"}).content.decode()
    assert re.search(r'id="col-trim"[^>]*data-kept="([^"]*)"', page).group(1) == "5"
    assert not re.search(r'name="keep_system" value="1" checked', page)
