"""State an end user can see on "My memories": memory off is a banner with a one-click turn-on; Undo is
where the delete happened; the search box filters every section; row buttons name their memory."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryboard.models import ArchivedReason, LongTermMemory, UserMemorySettings

pytestmark = pytest.mark.django_db


def test_memory_off_is_a_banner_with_one_click_turn_on(login, alice):
    client = login(alice)
    assert 'id="memory-off"' not in client.get(reverse("my-memories")).content.decode()
    client.post(reverse("my-memories-switch"), {"save_memories": "on"})  # "use my memories" unticked
    html = client.get(reverse("my-memories")).content.decode()
    assert 'id="memory-off"' in html and "Agents do not use your memories." in html
    client.post(reverse("my-memories-switch"), {})
    assert "Memory is off." in client.get(reverse("my-memories")).content.decode()
    client.post(reverse("my-memories-switch"), {"use_memories": "on", "save_memories": "on"})  # the banner's button
    settings = UserMemorySettings.objects.get(user_id=str(alice.pk))
    assert settings.use_memories and settings.save_memories
    assert 'id="memory-off"' not in client.get(reverse("my-memories")).content.decode()


def test_undo_is_where_the_delete_happened(login, alice, make_memory):
    memory = make_memory(alice, "I like green tea")
    client = login(alice)
    response = client.post(reverse("my-memories-delete", args=[memory.pk]))
    assert response.status_code == 302 and response["Location"].endswith("#undo-bar")
    html = client.get(response["Location"].split("#")[0]).content.decode()
    bar = html[html.index('id="undo-bar"') - 200:html.index('id="undo-bar"') + 600]
    assert "You deleted “I like green tea”." in bar
    assert reverse("my-memories-restore", args=[memory.pk]) in bar
    assert html.index('id="undo-bar"') < html.index('id="recently-deleted"')
    client.post(reverse("my-memories-restore", args=[memory.pk]))
    assert not LongTermMemory.objects.get(pk=memory.pk).archived
    # Someone else's id in the address shows no bar.
    assert 'id="undo-bar"' not in client.get(reverse("my-memories"), {"undo": "nope"}).content.decode()


def test_the_search_box_filters_every_section(login, alice, make_memory):
    make_memory(alice, "tea in the morning")
    make_memory(alice, "coffee at night")
    make_memory(alice, "tea archived by staff", archived_reason=ArchivedReason.STAFF)
    make_memory(alice, "coffee archived by staff", archived_reason=ArchivedReason.STAFF)
    make_memory(alice, "tea I deleted", archived_reason=ArchivedReason.USER_DELETED)
    make_memory(alice, "coffee I deleted", archived_reason=ArchivedReason.USER_DELETED)
    html = login(alice).get(reverse("my-memories"), {"q": "tea"}).content.decode()
    assert "tea archived by staff" in html and "tea I deleted" in html and "tea in the morning" in html
    assert "coffee" not in html


def test_row_buttons_say_which_memory_and_a_skip_link(login, alice, make_memory):
    make_memory(alice, "I like green tea")
    html = login(alice).get(reverse("my-memories")).content.decode()
    assert 'aria-label="Delete “I like green tea”"' in html and 'aria-label="Edit “I like green tea”"' in html
    assert 'class="skip-link" href="#main"' in html and '<main id="main"' in html
