"""The memory changelist: columns, filters, search, escaping, constant queries, no full COUNT(*)."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memoryboard.models import ChatMessage, LongTermMemory, MemoryFlag
from tests.admin.conftest import change_url, changelist_url

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('x')</script>"
IMG = '<img src=x onerror="alert(1)">'


def _listed(client, query: str = "") -> list[str]:
    response = client.get(changelist_url() + query)
    assert response.status_code == 200
    return [obj.pk for obj in response.context["cl"].result_list]


def test_columns(login, support_user, alice, make_memory):
    make_memory(alice, "likes green tea", memory_type="PREFERENCE", source="auto_extract")
    page = login(support_user).get(changelist_url()).content.decode()
    for text in ("likes green tea", "Preference", "Auto-extracted", "chat", "Current"):
        assert text in page
    assert 'href="?state=archived"' in page  # the "archived" view


def test_filters(login, support_user, alice, bob, make_memory):
    a_fact = make_memory(alice, "alice fact", memory_type="FACT", agent="chat", source="agent_tool")
    a_pref = make_memory(alice, "alice pref", memory_type="PREFERENCE", agent="coder", source="auto_extract")
    b_fact = make_memory(bob, "bob fact", memory_type="FACT", agent="chat")
    archived = make_memory(bob, "bob old", archived_reason="decay")
    deleted = make_memory(alice, "alice deleted", archived_reason="user_deleted")
    MemoryFlag.objects.create(memory_id=b_fact.pk, paused=True)
    client = login(support_user)
    assert set(_listed(client, "?agent=coder")) == {a_pref.pk}
    assert set(_listed(client, f"?user={alice.pk}")) == {a_fact.pk, a_pref.pk, deleted.pk}
    assert set(_listed(client, f"?user={alice.pk}&agent=chat")) == {a_fact.pk, deleted.pk}
    assert set(_listed(client, "?type=PREFERENCE")) == {a_pref.pk}
    assert set(_listed(client, "?source=auto_extract")) == {a_pref.pk}
    assert set(_listed(client, "?state=active")) == {a_fact.pk, a_pref.pk}
    assert set(_listed(client, "?state=paused")) == {b_fact.pk}
    assert set(_listed(client, "?state=archived")) == {archived.pk}
    assert set(_listed(client, "?state=deleted")) == {deleted.pk}
    assert set(_listed(client, "?archived__exact=1")) == {archived.pk, deleted.pk}
    assert "Paused" in client.get(changelist_url() + "?state=paused").content.decode()


def test_one_state_filter_with_the_archive_reasons_and_the_states_of_their_own(login, support_user, alice,
                                                                                make_memory):
    decayed = make_memory(alice, "decayed", archived_reason="decay")
    by_staff = make_memory(alice, "by staff", archived_reason="staff")
    stale = make_memory(alice, "stale", archived_reason="superseded")
    client = login(support_user)
    assert set(_listed(client, "?state=archived")) == {decayed.pk, by_staff.pk}  # not the superseded one
    assert set(_listed(client, "?state=archived:decay")) == {decayed.pk}
    assert set(_listed(client, "?state=archived:staff")) == {by_staff.pk}
    assert set(_listed(client, "?state=superseded")) == {stale.pk}
    page = client.get(changelist_url()).content.decode()
    assert "By archived reason" not in page and "By archived" not in page  # the overlapping filters are gone
    assert "Archived · Decayed" in page


def test_user_filter_keeps_other_filters(login, support_user, alice, make_memory):
    make_memory(alice, "x")
    page = login(support_user).get(changelist_url() + "?type=FACT&user=7").content.decode()
    assert '<input type="hidden" name="type" value="FACT">' in page
    assert 'name="user" value="7"' in page


def test_search_content_and_id(login, support_user, alice, bob, make_memory):
    tea = make_memory(alice, "Likes Green TEA")
    coffee = make_memory(bob, "likes coffee")
    client = login(support_user)
    assert _listed(client, "?q=green+tea") == [tea.pk]
    assert _listed(client, f"?q={coffee.pk}") == [coffee.pk]


def test_search_on_a_large_table_needs_a_user(login, support_user, alice, make_memory, settings):
    settings.MEMORYBOARD_ADMIN_SEARCH_SCAN_MAX_ROWS = 1
    tea = make_memory(alice, "likes green tea")
    make_memory(alice, "likes black tea")
    client = login(support_user)
    response = client.get(changelist_url() + "?q=green")
    assert list(response.context["cl"].result_list) == []
    assert "Choose a user to search content" in response.content.decode()
    assert _listed(client, f"?q={tea.pk}") == [tea.pk]
    assert _listed(client, f"?q=green&user={alice.pk}") == [tea.pk]


@pytest.mark.parametrize("payload", [SCRIPT, IMG])
def test_content_is_escaped_everywhere(login, support_user, superuser, alice, make_memory, payload):
    from memoryboard.models import AuditLog

    memory = make_memory(alice, f"note {payload}")
    ChatMessage.objects.create(conversation_id=payload, agent_id="chat", user_id="1", role="USER", content=payload)
    entry = AuditLog.objects.get(object_id=memory.pk)
    client = login(support_user)
    pages = [
        client.get(changelist_url()),
        client.get(change_url(memory)),
        client.get(reverse("admin:memoryboard_chatmessage_changelist")),
        client.get(reverse("admin:memoryboard_auditlog_change", args=[entry.pk])),
    ]
    # The confirmation page of a bulk action shows the content too.
    pages.append(client.post(changelist_url(), {"action": "archive_selected", "index": 0,
                                                "_selected_action": [memory.pk]}))
    for response in pages:
        body = response.content.decode()
        assert response.status_code == 200
        assert payload not in body
        assert "&lt;" in body and ("&lt;script&gt;" in body or "&lt;img" in body)


def _changelist_queries(client, query: str = "") -> list[str]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(changelist_url() + query)
    assert response.status_code == 200
    return [q["sql"] for q in ctx.captured_queries]


def _seed(alice, n: int, start: int = 0) -> None:
    from django.utils import timezone

    from memoryboard.models.namespaces import build_namespace

    ns = build_namespace(agent_namespace="chat", user_id=str(alice.pk)).as_text()
    now = timezone.now()
    LongTermMemory.objects.bulk_create([
        LongTermMemory(id=f"m{i:05d}", namespace=ns, key_name=f"m{i:05d}", created_at=now, updated_at=now,
                       value_json={"content": f"item {i}", "agentId": "chat", "source": "agent_tool", "type": "FACT"})
        for i in range(start, start + n)
    ])


@pytest.mark.parametrize("query", ["", "?type=FACT", "?q=item", "?state=active", "?state=paused"])
def test_query_count_is_constant(login, support_user, alice, query, django_assert_max_num_queries):
    client = login(support_user)
    _seed(alice, 10)
    _changelist_queries(client, query)  # warms the cached agent list
    few = len(_changelist_queries(client, query))
    _seed(alice, 90, start=10)
    many = len(_changelist_queries(client, query))
    assert few == many
    with django_assert_max_num_queries(few):
        client.get(changelist_url() + query)


def _full_counts(sqls: list[str], table: str) -> list[str]:
    return [s for s in sqls if "COUNT(" in s.upper() and table in s and not re.search(r"LIMIT \d+\)", s)]


@pytest.mark.parametrize("query", ["", "?p=2", "?agent=chat", "?q=item", "?state=archived"])
def test_no_full_count(login, support_user, alice, query):
    _seed(alice, 120)
    client = login(support_user)
    sqls = _changelist_queries(client, query)
    assert any("COUNT(" in s for s in sqls)  # the capped count is there...
    assert _full_counts(sqls, "ah_long_term_memory") == []  # ...and nothing else counts


def test_count_is_capped_and_said_so(login, support_user, alice, settings):
    from memoryboard.admin import paginator

    _seed(alice, 60)
    client = login(support_user)
    old = paginator.PAGES_AHEAD
    paginator.PAGES_AHEAD = 1
    try:
        response = client.get(changelist_url())
        assert response.context["cl"].result_count == 50
        assert "more than 50" in response.content.decode()
        # Paging on moves the cap: page 2 exists and counts further.
        response = client.get(changelist_url() + "?p=2")
        assert len(response.context["cl"].result_list) == 10
    finally:
        paginator.PAGES_AHEAD = old


def test_chat_messages_grouped_by_conversation(login, support_user):
    for conv in ("b", "a"):
        for i in range(2):
            ChatMessage.objects.create(conversation_id=conv, agent_id="chat", user_id="1", role="USER", content=f"{conv}{i}")
    client = login(support_user)
    url = reverse("admin:memoryboard_chatmessage_changelist")
    response = client.get(url)
    assert [m.conversation_id for m in response.context["cl"].result_list] == ["a", "a", "b", "b"]
    assert "?conversation_id=a" in response.content.decode()
    only_b = client.get(url + "?conversation_id=b").context["cl"].result_list
    assert [m.content for m in only_b] == ["b0", "b1"]
    sqls = [s for s in _capture(client, url) if "chat_message" in s]
    assert _full_counts(sqls, "chat_message") == []


def _capture(client, url):
    with CaptureQueriesContext(connection) as ctx:
        client.get(url)
    return [q["sql"] for q in ctx.captured_queries]


def test_audit_log_filters_and_a_readable_diff(login, support_user, developer, alice, make_memory):
    from memoryboard.models import AuditLog

    memory = make_memory(alice, "likes tea")
    client = login(support_user)
    client.post(change_url(memory), {"content": "likes coffee", "memory_type": "FACT"})
    url = reverse("admin:memoryboard_auditlog_changelist")
    listed = client.get(url + "?action__exact=update").context["cl"].result_list
    assert [e.action for e in listed] == ["update"]
    assert client.get(url + f"?actor__id__exact={support_user.pk}").context["cl"].result_list[0].actor == support_user
    assert client.get(url + "?object_type__exact=memory").status_code == 200
    entry = AuditLog.objects.get(action="update")
    page = client.get(reverse("admin:memoryboard_auditlog_change", args=[entry.pk])).content.decode()
    # Support reads the change in words: the old and the new text, no JSON, no namespace.
    assert "<td><del>likes tea</del></td><td><ins>likes coffee</ins></td>" in page
    assert '<pre class="mb-json">' not in page and "&quot;namespace&quot;" not in page
    # Developers keep the stored before/after.
    page = login(developer).get(reverse("admin:memoryboard_auditlog_change", args=[entry.pk])).content.decode()
    assert '<pre class="mb-json">' in page and "&quot;content&quot;: &quot;likes coffee&quot;" in page


def test_show_all_is_never_unbounded(login, support_user, alice):
    from memoryboard.admin import paginator

    _seed(alice, 60)
    client = login(support_user)
    old = paginator.PAGES_AHEAD
    paginator.PAGES_AHEAD = 1
    try:
        response = client.get(changelist_url() + "?all=")
        assert len(response.context["cl"].result_list) == 50  # capped count: no "show all"
    finally:
        paginator.PAGES_AHEAD = old
    response = client.get(changelist_url() + "?all=")
    assert len(response.context["cl"].result_list) == 60  # exact count under the limit: all shown


def test_audit_log_links_the_memory_without_extra_queries(login, support_user, alice, make_memory):
    client = login(support_user)
    url = reverse("admin:memoryboard_auditlog_changelist")
    memory = make_memory(alice, "one")
    client.get(url)  # fills the cached list of agents of the agent filter
    few = len(_capture(client, url))
    for i in range(20):
        make_memory(alice, f"more {i}")
    assert len(_capture(client, url)) == few
    assert reverse("admin:memoryboard_longtermmemory_change", args=[memory.pk]) in client.get(url).content.decode()


def test_agents_found_in_the_table(login, support_user, alice, make_memory, django_assert_max_num_queries):
    from memoryboard.ltm.store.selectors import stored_agent_namespaces

    travel = make_memory(alice, "books window seats", agent="travel")  # not in agents.yaml
    make_memory(alice, "x", agent="chat")
    make_memory(alice, "y", agent="chat2")
    LongTermMemory.objects.create(id="odd", namespace='["agent:chat","session:9"]', key_name="odd",
                                  value_json={"content": "not a memories namespace"})
    with django_assert_max_num_queries(6):  # one seek per distinct namespace head, not a scan
        assert stored_agent_namespaces() == ["chat", "chat2", "travel"]
    client = login(support_user)
    response = client.get(changelist_url())
    agent_spec = next(s for s in response.context["cl"].filter_specs if s.parameter_name == "agent")
    assert "travel" in dict(agent_spec.lookup_choices)
    assert _listed(client, f"?user={alice.pk}&type=FACT").count(travel.pk) == 1
