"""Facts that change, told to the agent through the chat API (offline): the current fact ranks first and
the stale one is not returned; the old item is kept, superseded, restorable."""

from __future__ import annotations

import pytest

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.search.retrieval import memory_retrieve
from memoryboard.models import LongTermMemory

pytestmark = pytest.mark.django_db

URL = "/api/v1/agents/chat/chat"


def tell(api, message):
    response = api.post(URL, {"message": message}, format="json")  # a new conversation each time
    assert response.status_code == 200, response.content
    return response.json()


def contents(alice, query):
    namespace = build_namespace(agent_namespace="chat", user_id=str(alice.pk))
    return [item.memory.content for item in memory_retrieve(namespace=namespace, query=query, k=10, log_access=False)]


@pytest.mark.parametrize("before,after,question,current,stale", [
    ("I live in Shanghai.", "Actually I moved to Berlin last month, I live in Berlin now.",
     "Where does the user live?", "Berlin", "Shanghai"),
    ("I work as a Java backend developer.", "I quit Java, I am a Rust developer now.",
     "What is the user's job?", "Rust", "Java backend"),
    ("我住在上海。", "我上个月搬到北京了。", "用户住在哪里？", "北京", "上海"),
    ("我是一名Java后端工程师。", "我转行做产品经理了。", "用户的职业是什么？", "产品经理", "Java"),
    ("My favourite drink is coffee.", "My favourite drink is green tea.", "What does the user like to drink?",
     "green tea", "coffee"),
])
def test_the_current_fact_ranks_first_and_the_stale_one_is_not_returned(api, alice, before, after, question,
                                                                         current, stale):
    tell(api, before)
    assert any(stale in c for c in contents(alice, question))
    body = tell(api, after)
    assert not body["extraction"].startswith("skipped"), body["extraction"]
    found = contents(alice, question)
    assert found and current in found[0], found
    assert not any(stale in c and current not in c for c in found), found
    old = LongTermMemory.objects.get(archived=True)
    new = LongTermMemory.objects.get(archived=False, pk=old.superseded_by)
    assert stale in old.content and old.archived_reason == "superseded"
    assert old.valid_to == max(new.valid_from, old.valid_from)  # never before the old one began
    # The next turn's system prompt carries the current fact only.
    used = tell(api, question)["memories_used"]
    assert used and current in used[0]["content"] and not any(u["id"] == old.pk for u in used)


def test_a_stated_time_sets_when_the_new_fact_became_true(api, alice):
    from django.utils import timezone

    tell(api, "I live in Shanghai.")
    tell(api, "Actually I moved to Berlin last month, I live in Berlin now.")
    berlin = LongTermMemory.objects.get(archived=False)
    now = timezone.now()
    first_of_last_month = (now.replace(day=1) - timezone.timedelta(days=1)).replace(day=1)
    assert berlin.valid_from.date() == first_of_last_month.date()


def test_saying_it_again_stores_nothing_new(api, alice):
    tell(api, "I live in Berlin.")
    assert tell(api, "I live in Berlin!")["extraction"] == "skipped: nothing new: already remembered"
    assert tell(api, "I moved to Berlin.")["extraction"] == "queued"  # the same fact in other words
    item = LongTermMemory.objects.get()
    assert item.content == "I live in Berlin" and item.value_json["seenCount"] == 2
    assert [s["source"] for s in item.value_json["sources"]] == ["auto_extract", "auto_extract"]


def test_where_one_lives_and_where_one_works_both_stay(api, alice):
    tell(api, "I live in Shanghai.")
    tell(api, "I work at Tencent in Shenzhen.")
    assert LongTermMemory.objects.filter(archived=False).count() == 2
