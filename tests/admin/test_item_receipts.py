"""An item's page shows its score parts and outcome in the recent retrieval receipts that considered it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from memoryboard.ltm.search.receipts import receipt_record
from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.store.selectors import own_memories
from memoryboard.models import RetrievalReceipt
from tests.admin.conftest import change_url

pytestmark = pytest.mark.django_db


def _retrieve(user, query: str, *, k: int = 5, agent: str = "chat") -> RetrievalReceipt:
    ranking = memory_rank(queryset=own_memories(user_id=str(user.pk)), query=query, k=k, user_id=str(user.pk))
    return receipt_record(ranking=ranking, agent_id=agent, user_id=str(user.pk), conversation_id="c1", kind="injection")


def _rows(page: str) -> str:
    start = page.index('id="mb-item-receipts"')
    return page[start:page.index("</table>", start)]


def test_item_page_shows_parts_and_outcome_of_receipts(login, support_user, alice, bob, make_memory):
    java = make_memory(alice, "User is a Java backend developer")
    hiking = make_memory(alice, "User likes hiking in the mountains", memory_type="PREFERENCE")
    receipt = _retrieve(alice, "Java backend developer")
    parts = next(c for c in receipt.candidates if c["id"] == java.pk)
    assert parts["outcome"] == "returned"
    bob_item = make_memory(bob, "User is a Java backend developer too")
    _retrieve(bob, "Java <b>developer</b>")

    client = login(support_user)
    page = client.get(change_url(java)).content.decode()
    rows = _rows(page)
    assert rows.count("<tr data-outcome=") == 1  # alice's receipt only, not bob's
    assert 'data-outcome="returned"' in rows and ">returned<" in rows
    for key in ("semantic", "keyword", "type_weight", "decay", "final"):
        assert f"<td>{parts[key]}</td>" in rows
    assert f"/admin/memoryboard/retrievalreceipt/{receipt.pk}/change/" in rows
    assert client.get(f"/admin/memoryboard/retrievalreceipt/{receipt.pk}/change/").status_code == 200

    hiking_rows = _rows(client.get(change_url(hiking)).content.decode())
    assert 'data-outcome="below_threshold"' in hiking_rows and "below the minimum relevance" in hiking_rows
    assert "&lt;b&gt;developer" in _rows(client.get(change_url(bob_item)).content.decode())  # query escaped


def test_item_never_retrieved_has_no_receipt_table(login, support_user, alice, make_memory):
    item = make_memory(alice, "User likes tea")
    page = login(support_user).get(change_url(item)).content.decode()
    assert 'id="mb-item-receipts"' not in page


def test_outcome_in_chinese(login, support_user, alice, make_memory):
    java = make_memory(alice, "User is a Java backend developer")
    _retrieve(alice, "Java developer")
    client = login(support_user)
    with translation.override("zh-hans"):
        page = client.get(change_url(java), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    rows = _rows(page)
    with translation.override("zh-hans"):
        assert translation.gettext("Recent retrievals that considered this item") in page
        assert translation.gettext("returned") in rows
        assert translation.gettext("Semantic") in rows
    assert "Recent retrievals that considered this item" not in page


def test_receipt_queries_do_not_grow_with_receipts(login, support_user, alice, make_memory):
    java = make_memory(alice, "User is a Java backend developer")
    client = login(support_user)
    _retrieve(alice, "Java developer")
    with CaptureQueriesContext(connection) as one:
        client.get(change_url(java))
    for _ in range(5):
        _retrieve(alice, "Java developer")
    with CaptureQueriesContext(connection) as six:
        page = client.get(change_url(java)).content.decode()
    assert _rows(page).count("<tr data-outcome=") == 6
    assert len(six) == len(one)
