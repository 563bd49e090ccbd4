"""Property: whatever one end user does, through the API or the web pages, with whatever ids, another
user's rows are neither changed nor revealed, in whichever namespace spelling they are stored (issue 12)."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.items import memory_create
from memoryboard.models import ChatMessage, LongTermMemory, MemoryFlag

pytestmark = pytest.mark.django_db

SECRET = "bobsecret"
QUERY = "secret"  # what alice searches for: a part of the secret, which pages echo back
SPELLINGS = [
    lambda a, u: json.dumps([f"agent:{a}", f"user:{u}", "memories"], separators=(",", ":")),
    lambda a, u: json.dumps([f"agent:{a}", f"user:{u}", "memories"]),
    lambda a, u: json.dumps([f"agent:{a}", f"user:{u}", "memories"], ensure_ascii=True),
]


def _api_ops(api: APIClient, target: str, conversation: str) -> dict:
    return {
        "list": lambda: api.get("/api/v1/memories/?limit=200"),
        "list as filter": lambda: api.get(f"/api/v1/memories/?user={target}&limit=200"),
        "retrieve": lambda: api.get(f"/api/v1/memories/{target}/"),
        "patch": lambda: api.patch(f"/api/v1/memories/{target}/", {"content": "hacked"}, format="json"),
        "delete": lambda: api.delete(f"/api/v1/memories/{target}/"),
        "archive": lambda: api.post(f"/api/v1/memories/{target}/archive/"),
        "restore": lambda: api.post(f"/api/v1/memories/{target}/restore/"),
        "search": lambda: api.get(f"/api/v1/memories/search/?q={QUERY}&k=100"),
        "conversations": lambda: api.get("/api/v1/conversations/"),
        "messages": lambda: api.get(f"/api/v1/conversations/{conversation}/messages/"),
        "chat": lambda: api.post("/api/v1/agents/chat/chat", {"message": f"what is {QUERY}?",
                                                               "conversation_id": conversation}, format="json"),
    }


def _web_ops(web: Client, target: str) -> dict:
    return {
        "page": lambda: web.get(reverse("my-memories") + f"?q={QUERY}"),
        "semantic": lambda: web.get(reverse("my-memories") + f"?q={QUERY}&mode=semantic"),
        "detail": lambda: web.get(reverse("my-memories-detail", args=[target])),
        "web delete": lambda: web.post(reverse("my-memories-delete", args=[target])),
        "web restore": lambda: web.post(reverse("my-memories-restore", args=[target])),
        "web pause": lambda: web.post(reverse("my-memories-pause", args=[target])),
        "bulk": lambda: web.post(reverse("my-memories-bulk"), {"action": "delete", "scope": "selected",
                                                              "ids": [target], "confirm": "True"}),
        "delete all": lambda: web.post(reverse("my-memories-delete-all")),
        "export": lambda: web.get(reverse("my-memories-export")),
    }


def _snapshot(user_id: str, ids: list[str]) -> list:
    rows = list(LongTermMemory.objects.filter(pk__in=ids).order_by("pk").values())
    flags = list(MemoryFlag.objects.filter(memory_id__in=ids).order_by("memory_id").values())
    messages = list(ChatMessage.objects.filter(user_id=user_id).order_by("id").values())
    return [rows, flags, messages]


def test_one_users_operations_never_change_or_reveal_anothers_rows(alice, bob):
    bob_id = str(bob.pk)
    bobs = []
    for index, spell in enumerate(SPELLINGS):
        for agent in ("chat", "助手"):
            memory = memory_create(namespace=build_namespace(agent_namespace=agent, user_id=bob_id),
                                   content=f"{SECRET} {index} {agent}", memory_type="FACT", agent_id=agent)
            LongTermMemory.objects.filter(pk=memory.pk).update(namespace=spell(agent, bob_id))
            bobs.append(memory.pk)
    ChatMessage.objects.create(conversation_id="bob-conv", agent_id="chat", user_id=bob_id, role="USER",
                               content=f"{SECRET} in a conversation")
    memory_create(namespace=build_namespace(agent_namespace="chat", user_id=str(alice.pk)),
                  content="alice's own note", memory_type="FACT", agent_id="chat")
    api = APIClient()
    api.force_authenticate(alice)
    web = Client()
    web.force_login(alice)
    before = _snapshot(bob_id, bobs)
    names = sorted(set(_api_ops(api, "x", "x")) | set(_web_ops(web, "x")))

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(steps=st.lists(st.tuples(st.sampled_from(names), st.sampled_from(bobs + ["nope", "%2e%2e"])),
                          min_size=1, max_size=6))
    def run(steps):
        for name, target in steps:
            ops = {**_api_ops(api, target, "bob-conv"), **_web_ops(web, target)}
            response = ops[name]()
            assert response.status_code < 500, (name, response.status_code)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            assert SECRET.encode() not in body, (name, target)
            assert _snapshot(bob_id, bobs) == before, (name, target)

    run()
