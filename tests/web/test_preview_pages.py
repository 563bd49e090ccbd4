"""The pages show the previews that are the result: the erase confirmation names the items it erases,
the admin's bulk confirmation names what each item becomes, a conflict's page what each choice keeps
and loses."""

from __future__ import annotations

import pytest
from django.contrib.admin import helpers
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
