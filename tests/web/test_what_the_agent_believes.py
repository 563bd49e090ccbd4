"""What the agent believes about you: the items each agent would load, by type, and for a question the exact
memory block the runtime injects (its own code), with tokens; an end user sees only their own."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from memoryboard.agent.runtime import build_system_prompt, retrieve_for_injection
from memoryboard.agents_config import get_agents_config
from memoryboard.ltm.search.retrieval import format_memory_block
from memoryboard.models import MemoryAccess, UserMemorySettings

pytestmark = pytest.mark.django_db


def test_the_page_shows_the_block_a_turn_would_inject(login, alice, bob, make_memory):
    make_memory(alice, "I live in <b>Hamburg</b>")
    make_memory(alice, "I prefer green tea", memory_type="PREFERENCE")
    make_memory(alice, "deleted by me", archived_reason="user_deleted")
    make_memory(bob, "bob lives in Oslo")
    client = login(alice)
    assert reverse("my-memories-beliefs") in client.get(reverse("my-memories")).content.decode()
    page = client.get(reverse("my-memories-beliefs"), {"agent": "chat", "q": "Where do I live?"})
    html = page.content.decode()
    assert page.status_code == 200
    chat = html.split('data-agent="chat"')[1].split("</section>")[0]
    assert 'data-type="FACT"' in chat and 'data-type="PREFERENCE"' in chat
    assert "I live in &lt;b&gt;Hamburg&lt;/b&gt;" in chat and "deleted by me" not in chat
    assert "bob lives in Oslo" not in html
    agent = get_agents_config().get("chat")
    ranking = retrieve_for_injection(agent=agent, user_id=str(alice.pk), query="Where do I live?")
    block = format_memory_block(ranking.results)
    assert block and block in build_system_prompt(agent, ranking.results)
    assert f"<pre class=\"memory-block\" id=\"beliefs-block-text\">{escape(block)}</pre>" in html
    assert f"≈ {round(len(block) / 2.5)} tokens" in html
    assert not MemoryAccess.objects.exists()  # not a use


def test_memories_switched_off_means_no_block_and_support_reads_the_user(login, alice, support_user, make_memory):
    make_memory(alice, "I live in Hamburg")
    UserMemorySettings.objects.create(user_id=str(alice.pk), use_memories=False, save_memories=True)
    html = login(alice).get(reverse("my-memories-beliefs"), {"q": "Where do I live?"}).content.decode()
    assert "Memories are switched off" in html
    url = reverse("person-beliefs", args=[str(alice.pk)])
    staff = login(support_user)
    assert url in staff.get(reverse("person", args=[str(alice.pk)])).content.decode()
    assert "I live in Hamburg" in staff.get(url).content.decode()


def test_an_end_user_cannot_open_someone_elses(login, alice, bob):
    assert login(alice).get(reverse("person-beliefs", args=[str(bob.pk)])).status_code == 403
