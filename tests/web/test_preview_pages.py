"""The pages show the previews that are the result: the erase confirmation names the items it erases,
the admin's bulk confirmation names what each item becomes, a conflict's page what each choice keeps
and loses."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryboard.models import AuditLog, LongTermMemory

pytestmark = pytest.mark.django_db


def test_the_erase_page_lists_the_items_it_erases_and_only_mine(login, alice, bob, make_memory):
    make_memory(alice, "alice likes <i>tea</i>")
    make_memory(bob, "bob likes coffee")
    html = login(alice).get(reverse("my-data-erase")).content.decode()
    assert 'id="erase-items"' in html and "alice likes &lt;i&gt;tea&lt;/i&gt;" in html
    assert "bob likes coffee" not in html
    assert LongTermMemory.objects.count() == 2 and not AuditLog.objects.filter(action="erase").exists()


def _conflict(user, make_memory):
    old = make_memory(user, "I live in Berlin and work at SAP")
    new = make_memory(user, "I live in Hamburg")
    for a, b in ((old, new), (new, old)):
        LongTermMemory.objects.filter(pk=a.pk).update(value_json={**a.value_json, "conflictWith": [b.pk]})
    return new, old


def test_a_conflict_page_says_why_and_what_each_choice_keeps_and_loses(login, alice, make_memory):
    new, old = _conflict(alice, make_memory)
    client = login(alice)
    review = client.get(reverse("my-memories")).content.decode()
    url = reverse("my-memories-conflict", args=[new.pk, old.pk])
    assert url in review and "They disagree on where they live" in review
    page = client.get(url)
    html = page.content.decode()
    assert "They disagree on where they live: “berlin” (earlier) or “hamburg” (newer)." in html
    assert "The earlier one also says where they work: “sap”" in html
    keep_newer = html.split('data-choice="new"')[1].split("</section>")[0]
    assert "<del>I live in Berlin and work at SAP</del>" in keep_newer  # named, not silently dropped
    assert "I live in Hamburg; work at SAP" in html.split('data-choice="merge"')[1].split("</section>")[0]
    assert "csrfmiddlewaretoken" in html and not AuditLog.objects.filter(reason__startswith="conflict").exists()
    preview = client.post(url, {"choice": "edit", "step": "preview", "text": "I live in <b>Hamburg</b>, work at SAP"})
    edit = preview.content.decode().split('data-choice="edit"')[1].split("</section>")[0]
    assert "I live in &lt;b&gt;Hamburg&lt;/b&gt;, work at SAP" in edit
    done = client.post(url, {"choice": "edit", "step": "settle", "text": "I live in Hamburg and work at SAP"})
    assert done.status_code == 302
    assert LongTermMemory.objects.get(pk=new.pk).content == "I live in Hamburg and work at SAP"
    assert LongTermMemory.objects.get(pk=old.pk).archived_reason == "superseded"
    assert client.get(url).status_code == 404  # settled


def test_a_conflict_of_someone_else_is_a_404_and_support_reads_it_on_the_user_page(
        login, alice, bob, support_user, make_memory):
    new, old = _conflict(bob, make_memory)
    assert login(alice).get(reverse("my-memories-conflict", args=[new.pk, old.pk])).status_code == 404
    empty = login(alice).post(reverse("my-memories-conflict", args=[new.pk, old.pk]), {"choice": "new", "step": "settle"})
    assert empty.status_code == 404 and not LongTermMemory.objects.filter(archived=True).exists()
    url = reverse("person-conflict", args=[str(bob.pk), new.pk, old.pk])
    staff = login(support_user)
    assert url in staff.get(reverse("person", args=[str(bob.pk)])).content.decode()
    assert staff.post(url, {"choice": "edit", "step": "settle", "text": " "}).status_code == 400
    assert staff.post(url, {"choice": "old", "step": "settle"}).status_code == 302
    assert LongTermMemory.objects.get(pk=new.pk).archived_reason == "rejected"


def test_settling_needs_csrf(alice, make_memory):
    from django.test import Client

    new, old = _conflict(alice, make_memory)
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(reverse("my-memories-conflict", args=[new.pk, old.pk]), {"choice": "new", "step": "settle"})
    assert response.status_code == 403 and not LongTermMemory.objects.filter(archived=True).exists()
