"""The context window viewer: the request an agent would send, before and after its pipeline."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memoryboard.models import LongTermMemory, MemoryAccess, UserMemorySettings

pytestmark = pytest.mark.django_db


def _window(html: str) -> dict[str, str]:
    head = re.search(r'<section class="pg-window" id="context-window"(.*?)>', html, re.S).group(1)
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', head))


def test_injected_memories_are_shown_without_counting_as_a_use(login, developer, alice, make_memory,
                                                               make_conversation):
    memory = make_memory(alice, "alice is a Java backend developer")
    make_conversation(alice, 6, contents=["sys", "I write Java backend code", "ok", "more Java", "sure", "Java?"])
    html = login(developer).get(reverse("playground"), {"conversation": "c1"}).content.decode()
    data = _window(html)
    assert data["agent"] == "chat" and data["memories"] == "1"
    assert "&lt;long_term_memory&gt;" in html and "alice is a Java backend developer" in html
    assert 'class="part-memory"' in html and 'class="part-tools"' in html  # chat has the memory tools
    assert LongTermMemory.objects.get(pk=memory.pk).access_count == 0
    assert not MemoryAccess.objects.exists()
    # The preview's retrieval receipt: the candidate, its outcome and score parts; nothing stored.
    assert 'id="retrieval-receipt" data-returned="1"' in html
    assert re.search(rf'<tr data-outcome="returned"><td><code>{memory.pk}</code>', html)
    from memoryboard.models import RetrievalReceipt

    assert not RetrievalReceipt.objects.exists()


def test_memory_switch_off_means_no_injection(login, developer, alice, make_memory, make_conversation):
    make_memory(alice, "alice likes tea")
    UserMemorySettings.objects.create(user_id=str(alice.pk), use_memories=False)
    make_conversation(alice, 4, contents=["sys", "tea please", "ok", "tea again"])
    html = login(developer).get(reverse("playground"), {"conversation": "c1"}).content.decode()
    assert _window(html)["memories"] == "0" and "&lt;long_term_memory&gt;" not in html


def test_after_the_pipeline_fits_the_agents_budget(login, developer, alice, make_conversation):
    make_conversation(alice, 120, agent="coder", contents=["x" * 500] * 120)
    html = login(developer).get(reverse("playground"), {"conversation": "c1"}).content.decode()
    data = _window(html)
    assert data["agent"] == "coder" and data["budget"] == "8000"
    assert float(data["before-total"]) > 20000
    # The sliding window bounds the conversation; leading system rows (here the stored one) are kept as is.
    assert float(data["after-messages"]) <= 8000 + (500 / 2.5 + 4)
    assert float(data["after-total"]) < float(data["before-total"])
    assert 'class="budget-line"' in html


def test_choosing_another_agent(login, developer, alice, make_conversation):
    make_conversation(alice, 4)
    html = login(developer).get(reverse("playground"), {"conversation": "c1", "agent": "coder"}).content.decode()
    assert _window(html)["agent"] == "coder"
    assert 'class="part-tools"' not in html  # coder has no memory tools


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_support_reads_the_same_request_in_words_developers_as_sent(login, support_user, developer, alice,
                                                                    make_memory, make_conversation, settings,
                                                                    language):
    """Support staff read the tools as a list (what each does, each parameter's kind of value) and the
    injected memories and the receipt's candidates by their text; developers read the JSON, the memory block
    and the item ids the model call carries."""
    from django.utils import translation

    memory = make_memory(alice, "alice is a Java backend developer")
    make_conversation(alice, 6, contents=["sys", "I write Java backend code", "ok", "more Java", "sure", "Java?"])
    settings.LANGUAGE_CODE = language
    try:
        support = login(support_user).get(reverse("playground"), {"conversation": "c1"}).content.decode()
        dev = login(developer).get(reverse("playground"), {"conversation": "c1"}).content.decode()
    finally:
        translation.deactivate()
    window = support[support.index('id="context-window"'):]
    words = {
        "en": ["<code>content</code>: text · required — the memory, one sentence",
               "<code>k</code>: whole number · from 1 to 20 · optional",
               "Long-term memory given to the model:\n1. Fact: alice is a Java backend developer (relevance"],
        "zh-hans": ["<code>content</code>: 文本 · 必填 — 这条记忆，一句话",
                    "<code>k</code>: 整数 · 从 1 到 20 · 可选",
                    "提供给模型的长期记忆：\n1. 事实：alice is a Java backend developer（相关度"],
    }[language]
    for text in words:
        assert text in window, text
    assert '<tr data-outcome="returned"><td>alice is a Java backend developer</td>' in window
    assert memory.pk not in window and "&quot;type&quot;: &quot;function&quot;" not in window
    assert "&lt;long_term_memory&gt;" not in window
    dev_window = dev[dev.index('id="context-window"'):]
    assert "&quot;type&quot;: &quot;function&quot;" in dev_window and "&lt;long_term_memory&gt;" in dev_window
    assert f"<code>{memory.pk}</code>" in dev_window


def test_the_window_by_part_before_and_after_each_strategy(login, developer, alice, make_memory, make_conversation):
    from memoryboard.strategies import CONTEXT_STRATEGIES

    make_memory(alice, "alice deploys with Kubernetes")
    make_conversation(alice, 40, contents=["sys"] + [f"turn {i} about the Kubernetes deployment " * 6 for i in range(39)])
    html = login(developer).get(reverse("playground"), {"conversation": "c1", "c-summarize-threshold": "10",
                                                       "c-summarize-keep_last": "4"}).content.decode()
    table = html.split('id="window-each"')[1].split("</table>")[0]
    rows = {name: cells for name, cells in re.findall(
        r'<tr data-strategy="([A-Z_]*)"[^>]*><th>[^<]*</th>((?:<td class="num">(?:<strong>)?\d+(?:</strong>)?</td>){6})',
        table)}
    assert set(rows) == {"", *CONTEXT_STRATEGIES}, rows.keys()
    parts = {name: [int(n) for n in re.findall(r">(\d+)<", cells)] for name, cells in rows.items()}
    for name, (system, tools, memory, summary, messages, total) in parts.items():
        assert system + tools + memory + summary + messages == total, name
        assert memory > 0 and tools > 0, name  # the same prompt and tools on every row
    before = parts[""]
    assert parts["SUMMARIZE"][3] > before[3] and parts["SUMMARIZE"][4] < before[4]  # a summary replaced messages
    assert parts["TRIM"][3] == before[3] and parts["TRIM"][5] < before[5]
