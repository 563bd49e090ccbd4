"""Retrieval receipts: each agent turn records what its retrieval considered, injected and left out."""

from __future__ import annotations

import pytest

from memoryboard.models import MemoryFlag, RetrievalReceipt

pytestmark = pytest.mark.django_db

URL = "/api/v1/agents/chat/chat"


def test_a_turn_records_its_receipt_with_reasons(api, alice, make_memory):
    java = make_memory(alice, "用户是Java后端开发者")
    paused = make_memory(alice, "User writes Java services at work")
    MemoryFlag.objects.create(memory_id=paused.pk, paused=True)
    hiking = make_memory(alice, "User likes hiking in the mountains", memory_type="PREFERENCE")
    response = api.post(URL, {"message": "What programming language do I use at my job?"}, format="json")
    assert response.status_code == 200, response.content
    receipt = RetrievalReceipt.objects.get(kind="injection")
    assert receipt.user_id == str(alice.pk) and receipt.agent_id == "chat" and receipt.model_name == "use-multilingual-v3"
    outcomes = {c["id"]: c["outcome"] for c in receipt.candidates}
    assert outcomes[java.pk] == "returned"
    assert outcomes[paused.pk] == "paused"
    assert outcomes[hiking.pk] == "below_threshold"
    assert receipt.counts == {"returned": 1, "paused": 1, "below_threshold": 1}
    assert all({"semantic", "keyword", "type_weight", "decay", "final"} <= set(c) for c in receipt.candidates)


def test_receipts_are_in_the_admin_for_staff(client, superuser, api, alice, make_memory):
    make_memory(alice, "User is a Java developer")
    api.post(URL, {"message": "Tell me about Java"}, format="json")
    receipt = RetrievalReceipt.objects.get()
    client.force_login(superuser)
    assert client.get("/admin/memoryboard/retrievalreceipt/").status_code == 200
    page = client.get(f"/admin/memoryboard/retrievalreceipt/{receipt.pk}/change/")
    assert page.status_code == 200 and "returned" in page.content.decode()
