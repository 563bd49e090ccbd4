"""The user directory and the support user pages: people by name, everything about one user, export, erase."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from memoryboard.models import ArchivedReason, AuditLog, ChatMessage, LongTermMemory, MemoryAccess
from memoryboard.users import Person, find_people, people, user_ids_matching

pytestmark = pytest.mark.django_db




# --- the directory -----------------------------------------------------------------------------------


def test_people_are_named_from_django_users(bob_named, alice):
    found = people([str(bob_named.pk), str(alice.pk), "9999"])
    assert found[str(bob_named.pk)] == Person(user_id=str(bob_named.pk), name="Bob Builder",
                                              email="bob@example.com", username="bob")
    assert found[str(alice.pk)].name == "alice"
    assert found["9999"].name == "9999" and not found["9999"].known  # unknown ids are shown as they are


def test_a_filter_takes_a_name_an_email_or_an_id(bob_named, alice, django_user_model):
    django_user_model.objects.create_user(username="bobby")
    assert user_ids_matching("bob") == ["bob", str(bob_named.pk)]  # exact user name wins over "bobby"
    assert user_ids_matching("BOB@example.com") == ["BOB@example.com", str(bob_named.pk)]
    assert user_ids_matching(str(alice.pk)) == [str(alice.pk)]
    assert set(user_ids_matching("bo")) == {"bo", str(bob_named.pk), str(django_user_model.objects.get(
        username="bobby").pk)}  # no exact match: everyone whose name contains it
    assert user_ids_matching("  ") == []
    assert [p.username for p in find_people("builder")] == ["bob"]


def test_a_full_name_finds_the_person(bob_named, django_user_model):
    bobby = django_user_model.objects.create_user(username="bobby", first_name="Bob", last_name="Marley")
    assert [p.username for p in find_people("Bob Builder")] == ["bob"]  # first and last name, each a word
    assert [p.username for p in find_people("builder  bob")] == ["bob"]  # any order, any case
    assert [p.username for p in find_people("Bob")] == ["bob", "bobby"]
    assert find_people("Bob Dylan") == []
    assert user_ids_matching("Bob Marley") == ["Bob Marley", str(bobby.pk)]


def test_a_custom_id_function_is_followed(settings, bob):
    settings.MEMORYBOARD_USER_ID_FUNCTION = "tests.web.test_people.prefixed_id"
    assert user_ids_matching("bob") == ["bob", f"ext-{bob.pk}"]
    assert people([f"ext-{bob.pk}"])[f"ext-{bob.pk}"].username == "bob"


def prefixed_id(user) -> str:
    return f"ext-{user.pk}"


class StaticDirectory:
    """A platform whose users live elsewhere (MEMORYBOARD_USER_DIRECTORY)."""

    PEOPLE = [Person(user_id="u-7", name="Carol Chen", email="carol@corp.example", username="carol")]

    def people(self, user_ids):
        return {p.user_id: p for p in self.PEOPLE if p.user_id in set(user_ids)}

    def find(self, term, *, limit=20):
        return [p for p in self.PEOPLE if term.lower() in (p.name + p.email + p.username + p.user_id).lower()]


def test_the_directory_can_be_replaced_by_a_setting(settings, login, support_user, make_memory):
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.items import memory_create

    settings.MEMORYBOARD_USER_DIRECTORY = "tests.web.test_people.StaticDirectory"
    memory_create(namespace=build_namespace(agent_namespace="chat", user_id="u-7"), content="carol likes tea",
                  memory_type="FACT", source="agent_tool", agent_id="chat")
    client = login(support_user)
    page = client.get(reverse("admin:memoryboard_longtermmemory_changelist") + "?user=carol").content.decode()
    assert "carol likes tea" in page and "Carol Chen" in page
    assert "Carol Chen" in client.get(reverse("person", args=["u-7"])).content.decode()


# --- filters -----------------------------------------------------------------------------------------


def test_admin_user_filter_finds_bob_by_name_and_shows_name_and_id(login, support_user, bob_named, alice,
                                                                     make_memory):
    make_memory(bob_named, "bob rides a bike")
    make_memory(alice, "alice drives")
    client = login(support_user)
    page = client.get(reverse("admin:memoryboard_longtermmemory_changelist") + "?user=bob").content.decode()
    assert "bob rides a bike" in page and "alice drives" not in page
    assert f'<a href="{reverse("person", args=[bob_named.pk])}">Bob Builder</a>' in page
    assert f'<span class="mb-uid">{bob_named.pk}</span>' in page
    by_mail = client.get(reverse("admin:memoryboard_longtermmemory_changelist") + "?user=bob@example.com")
    assert "bob rides a bike" in by_mail.content.decode()


def test_api_user_filter_takes_a_name(as_user_client, support_user, bob_named, alice, make_memory):
    make_memory(bob_named, "bob rides a bike")
    make_memory(alice, "alice drives")
    response = as_user_client(support_user).get("/api/v1/memories/?user=bob")
    assert [m["content"] for m in response.json()["results"]] == ["bob rides a bike"]
    # An end user's filter narrows their own items only: bob's name gives alice nothing of bob's.
    response = as_user_client(alice).get("/api/v1/memories/?user=bob")
    assert response.json()["results"] == []


@pytest.fixture
def as_user_client():
    from rest_framework.test import APIClient

    def make(user):
        client = APIClient()
        client.force_authenticate(user)
        return client

    return make


def test_chat_messages_by_user_name_and_content_search_within_the_user(login, support_user, bob_named, alice):
    ChatMessage.objects.create(conversation_id="cb", agent_id="chat", user_id=str(bob_named.pk), role="USER",
                               content="where is my parcel")
    ChatMessage.objects.create(conversation_id="ca", agent_id="chat", user_id=str(alice.pk), role="USER",
                               content="where is my parcel too")
    client = login(support_user)
    url = reverse("admin:memoryboard_chatmessage_changelist")
    page = client.get(url + "?user=bob&q=parcel").content.decode()
    assert "where is my parcel" in page and "where is my parcel too" not in page and "Bob Builder" in page
    # Without a user, the search is an exact conversation id (no scan of every message).
    page = client.get(url + "?q=parcel").content.decode()
    assert "where is my parcel" not in page
    assert "where is my parcel too" in client.get(url + "?q=ca").content.decode()
    assert client.get(url).context["cl"].list_per_page == 50


def test_audit_log_filtered_by_subject_user_and_agent(login, support_user, bob_named, alice, make_memory):
    from memoryboard.ltm.store.items import memory_archive, memory_restore

    bobs = make_memory(bob_named, "bob rides a bike")
    bobs_coder = make_memory(bob_named, "bob writes go", agent="coder")
    alices = make_memory(alice, "alice drives")
    for m in (bobs, bobs_coder, alices):
        memory_restore(memory=memory_archive(memory=m, actor=support_user), actor=support_user)
    client = login(support_user)
    url = reverse("admin:memoryboard_auditlog_changelist")
    cl = client.get(url + "?subject_user=bob").context["cl"]
    assert {(e.object_id, e.action) for e in cl.result_list} >= {(bobs.pk, "archive"), (bobs.pk, "restore")}
    assert {e.object_id for e in cl.result_list} == {bobs.pk, bobs_coder.pk}
    page = client.get(url + "?subject_user=bob").content.decode()
    assert "Bob Builder" in page and "Archived by support" in page  # the reason, translated, not "staff"
    cl = client.get(url + "?subject_user=bob&subject_agent=coder").context["cl"]
    assert {e.object_id for e in cl.result_list} == {bobs_coder.pk}


def test_bulk_action_messages_have_correct_plurals_and_one_audit_entry(login, support_user, alice, make_memory):
    from tests.admin.conftest import run_action

    one = make_memory(alice, "one")
    client = login(support_user)
    response = run_action(client, "archive_selected", [one.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Archived 1 item." in page and "1 items" not in page
    cl = client.get(reverse("admin:memoryboard_auditlog_changelist")).context["cl"]
    assert [(e.action, e.object_id) for e in cl.result_list if e.action != "create"] == [("archive", one.pk)]


# --- the user page -------------------------------------------------------------------------------------


def test_people_search_and_user_page(login, support_user, bob_named, make_memory, alice):
    item = make_memory(bob_named, "bob rides a bike", memory_type="PREFERENCE")
    make_memory(bob_named, "bob writes go", agent="coder", archived_reason=ArchivedReason.STAFF)
    make_memory(bob_named, "bob deleted this", archived_reason=ArchivedReason.USER_DELETED)
    make_memory(alice, "alice drives")
    MemoryAccess.objects.create(memory_id=item.pk, agent_id="chat", conversation_id="conv-9", kind="retrieval")
    ChatMessage.objects.create(conversation_id="conv-9", agent_id="chat", user_id=str(bob_named.pk), role="USER",
                               content="hi")
    client = login(support_user)
    found = client.get(reverse("people") + "?q=Builder").content.decode()
    assert f'href="{reverse("person", args=[bob_named.pk])}"' in found and "bob@example.com" in found
    page = client.get(reverse("person", args=[bob_named.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "Bob Builder" in html and "3 items" in html
    rows = {r["agent"]: r for r in page.context["rows"]}
    assert [n for n, _url in rows["chat"]["states"]] == [1, 0, 0, 1]  # active, paused, archived, deleted
    assert [n for n, _url in rows["coder"]["states"]] == [0, 0, 1, 0]
    assert [m.content for m in page.context["items"]] == ["bob deleted this", "bob writes go", "bob rides a bike"]
    assert "conv-9" in html and "Retrieval" in html  # accesses and conversations
    assert "alice drives" not in html
    assert [e.object_id for e in page.context["audit"]].count(item.pk) >= 1


def test_an_unknown_id_with_items_is_offered(login, support_user, make_memory):
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.items import memory_create

    memory_create(namespace=build_namespace(agent_namespace="chat", user_id="ext-42"), content="x",
                  memory_type="FACT", source="agent_tool", agent_id="chat")
    html = login(support_user).get(reverse("people") + "?q=ext-42").content.decode()
    assert 'href="/support/users/ext-42/"' in html


def test_user_pages_are_for_staff_and_actions_for_support(login, alice, developer, bob):
    assert login(alice).get(reverse("people")).status_code == 403
    assert login(alice).get(reverse("person", args=[bob.pk])).status_code == 403
    client = login(developer)
    assert client.get(reverse("person", args=[bob.pk])).status_code == 200
    assert client.post(reverse("person-export", args=[bob.pk])).status_code == 403
    assert client.post(reverse("person-erase", args=[bob.pk]), {"confirm": "yes"}).status_code == 403


def test_export_for_a_user_is_audited(login, support_user, bob, make_memory):
    make_memory(bob, "bob rides a bike")
    make_memory(bob, "old", archived_reason=ArchivedReason.DECAY)
    client = login(support_user)
    assert client.get(reverse("person-export", args=[bob.pk])).status_code == 405  # a POST: it is recorded
    response = client.post(reverse("person-export", args=[bob.pk]))
    data = json.loads(response.content)
    assert data["user_id"] == str(bob.pk) and len(data["memories"]) == 2
    entry = AuditLog.objects.get(action="export")
    assert (entry.object_type, entry.object_id, entry.actor) == ("user", str(bob.pk), support_user)


def test_erase_all_asks_first_then_erases_everything_in_one_audited_step(login, support_user, bob, alice,
                                                                         make_memory):
    items = [make_memory(bob, "bob rides a bike"), make_memory(bob, "old", archived_reason=ArchivedReason.STAFF)]
    ChatMessage.objects.create(conversation_id="c-bob", agent_id="chat", user_id=str(bob.pk), role="USER",
                               content="I ride a bike")
    other = make_memory(alice, "alice drives")
    client = login(support_user)
    confirm = client.get(reverse("person-erase", args=[bob.pk]))
    rows = {key: n for key, _label, n in confirm.context["rows"]}
    assert rows["memories"] == 2 and rows["chat_messages"] == 1
    assert "It cannot be undone." in confirm.content.decode()
    unticked = client.post(reverse("person-erase", args=[bob.pk]))
    assert unticked.status_code == 400 and 'id="erase-error"' in unticked.content.decode()
    assert LongTermMemory.objects.count() == 3  # nothing changed
    response = client.post(reverse("person-erase", args=[bob.pk]), {"confirm": "yes"}, follow=True)
    assert "was erased" in response.content.decode()
    assert not LongTermMemory.objects.filter(pk__in=[m.pk for m in items]).exists()
    assert not ChatMessage.objects.filter(user_id=str(bob.pk)).exists()
    assert LongTermMemory.objects.filter(pk=other.pk, archived=False).exists()
    erase = AuditLog.objects.get(action="erase")
    assert (erase.object_id, erase.actor, erase.reason) == (str(bob.pk), support_user, "privacy request")
    assert erase.after["tables"]["ah_long_term_memory"] == 2 and erase.after["tables"]["chat_message"] == 1
    assert "bike" not in json.dumps(erase.after)
    after = {key: n for key, _label, n in client.get(reverse("person-erase", args=[bob.pk])).context["rows"]}
    assert after["memories"] == 0 and after["chat_messages"] == 0


@pytest.mark.parametrize("user_id", ["ext 42", "team/ext-42", "ü-7"])
def test_user_pages_take_any_platform_id(login, support_user, user_id):
    from memoryboard.admin.memory import person_link
    from memoryboard.models.namespaces import build_namespace
    from memoryboard.ltm.write.items import memory_create

    memory_create(namespace=build_namespace(agent_namespace="chat", user_id=user_id), content="odd id item",
                  memory_type="FACT", source="agent_tool", agent_id="chat")
    url = reverse("person", args=[user_id])
    assert f'href="{url}"' in person_link(people([user_id])[user_id])
    response = login(support_user).get(url)
    assert response.status_code == 200 and response.context["total"] == 1
    rows = login(support_user).get(reverse("person-erase", args=[user_id])).context["rows"]
    assert dict((key, n) for key, _label, n in rows)["memories"] == 1


def test_home_page_leads_support_staff_to_the_user_pages(login, support_user, alice):
    # Support staff start from the home page: a card takes them to "find anyone"; end users get none.
    html = login(support_user).get(reverse("home")).content.decode()
    assert f'href="{reverse("people")}" data-card="people"' in html
    html = login(alice).get(reverse("home")).content.decode()
    assert 'data-card="people"' not in html and reverse("people") not in html


def test_superseded_items_count_as_superseded_and_the_admin_lists_them_by_state(login, support_user, bob_named,
                                                                                 make_memory):
    make_memory(bob_named, "bob lives in Shanghai", archived_reason=ArchivedReason.SUPERSEDED)
    make_memory(bob_named, "bob lives in Berlin")
    make_memory(bob_named, "bob writes go", archived_reason=ArchivedReason.STAFF)
    client = login(support_user)
    page = client.get(reverse("person", args=[bob_named.pk]))
    rows = {r["agent"]: r for r in page.context["rows"]}
    states = dict(zip(["active", "paused", "archived", "deleted", "superseded", "expired", "pending_review",
                       "rejected"], rows["chat"]["states"]))
    assert states["active"][0] == 1 and states["archived"][0] == 1 and states["superseded"][0] == 1
    # Each count links to the page's own list of those items (the audit trail below names the others).
    superseded = [m.content for m in client.get(states["superseded"][1]).context["items"]]
    assert superseded == ["bob lives in Shanghai"]
    archived = [m.content for m in client.get(states["archived"][1]).context["items"]]
    assert archived == ["bob writes go"]


def test_conversations_with_one_agent_are_told_apart_by_their_first_question(login, support_user, alice,
                                                                          make_conversation):
    make_conversation(alice, 4, conversation_id="c-tea", contents=["sys", "Which tea suits mornings?", "a", "b"])
    make_conversation(alice, 4, conversation_id="c-bike", contents=["sys", "How do I fix a flat tyre?", "a", "b"])
    page = login(support_user).get(reverse("person", args=[alice.pk])).content.decode()
    assert "“Which tea suits mornings?”" in page and "“How do I fix a flat tyre?”" in page
