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


FALLBACK = {
    "en": "the summarizer failed (%s), so only the first 3 messages were kept",
    "zh-hans": "总结失败（%s），因此只保留了前 3 条消息",
}
NOTHING_DELETED = {"en": "the summarizer failed (%s), so nothing is deleted", "zh-hans": "总结失败（%s），因此没有删除任何内容"}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_failed_summary_is_said_in_the_readers_language(login, developer, openai_settings, settings, language):
    """The column, the same-budget ranking and the memory plan say why SUMMARIZE fell back in the page's
    language (the summarizer's own error quoted as it came); the API's English text stays in data-fallback."""
    from django.utils import translation

    from memoryboard.models import ChatMessage

    settings.LANGUAGE_CODE = language
    openai_settings.set_fault("http500")
    client = login(developer)
    try:
        html = _column(client).content.decode()
        english = _attrs(html)["fallback"]
        assert english.startswith("summarizer failed: ") and english.endswith("; kept the first 3 messages")
        detail = english.removeprefix("summarizer failed: ").removesuffix("; kept the first 3 messages")
        shown = re.search(r'<div class="fallback" role="status"><dt>[^<]*</dt><dd>(.*?)</dd>', html).group(1)
        assert shown == FALLBACK[language] % detail.replace("'", "&#x27;")
        for i, m in enumerate(MESSAGES):
            ChatMessage.objects.create(conversation_id="c-fail", agent_id="chat", user_id="7", role=m["role"].upper(),
                                       content=m["content"])
        page = client.get(reverse("playground"), {"conversation": "c-fail", "mode": "budget", "budget": "20",
                                                  "m-summarize-threshold": "5", "m-summarize-keep_last": "3",
                                                  "c-summarize-threshold": "5", "c-summarize-keep_last": "3"})
        page = page.content.decode()
    finally:
        translation.deactivate()
    ranked = re.search(r'<tr data-strategy="SUMMARIZE".*?</tr>', page, re.S).group(0)
    assert FALLBACK[language].split("%s")[0] in ranked and "summarizer failed:" not in ranked
    plan = re.search(r'<section class="pg-plan" id="plan-summarize".*?</section>', page, re.S).group(0)
    assert NOTHING_DELETED[language].split("%s")[0] in plan and "nothing deleted" not in plan.split(">", 1)[1]
