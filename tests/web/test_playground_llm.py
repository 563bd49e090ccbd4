"""The SUMMARIZE column through the real openai client against the fake server, faults included."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user" if i % 2 else "assistant", "content": f"turn {i} about the project"} for i in range(12)]
FORM = {"c-summarize-threshold": "5", "c-summarize-keep_last": "3"}


def _column(client) -> object:
    """Paste the messages (kept as a trace), then render the SUMMARIZE column for them."""
    pasted = client.post(reverse("playground"), {"messages_json": json.dumps(MESSAGES)})
    trace = pasted["Location"].split("trace=")[1]
    return client.get(reverse("playground-context", args=["summarize"]), {"trace": trace, **FORM})


def _attrs(html: str) -> dict[str, str]:
    head = re.search(r'<section class="pg-col" id="col-summarize"(.*?)>', html, re.S).group(1)
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', head))


def test_llm_summary_is_rendered(login, developer, openai_settings):
    openai_settings.push_reply("The user discussed the project over twelve turns.")
    response = _column(login(developer))
    html = response.content.decode()
    data = _attrs(html)
    assert response.status_code == 200
    assert data["llm-calls"] == "1" and data["fallback"] == ""
    assert data["summarized"] == "0-8" and data["kept"] == "9-11"
    assert "The user discussed the project over twelve turns." in html
    assert 'class="msg msg-summary"' in html
    assert len(openai_settings.chat_requests()) == 1


@pytest.mark.parametrize("fault", ["http500", "malformed", "timeout"])
def test_llm_failure_shows_the_fallback(login, developer, openai_settings, fault):
    openai_settings.set_fault(fault)
    response = _column(login(developer))
    html = response.content.decode()
    data = _attrs(html)
    assert response.status_code == 200
    assert data["fallback"]  # a short reason, also shown as text
    assert data["kept"] == "0-2" and data["dropped"] == "3-11"  # degraded to the first 3 messages
    assert 'class="fallback"' in html
