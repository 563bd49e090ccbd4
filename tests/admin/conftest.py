"""Helpers of the admin tests: URLs and posting an action (``login`` comes from tests/conftest.py)."""

from __future__ import annotations

from django.urls import reverse

CHANGELIST = "admin:memoryboard_longtermmemory_changelist"


def changelist_url() -> str:
    return reverse(CHANGELIST)


def change_url(memory) -> str:
    return reverse("admin:memoryboard_longtermmemory_change", args=[memory.pk])


def run_action(client, action: str, ids, *, confirm: bool = True, query: str = "", select_across: bool = False):
    """Post an admin action (the confirmation page first, then the confirmed post)."""
    data = {"action": action, "index": 0, "_selected_action": list(ids), "select_across": "1" if select_across else "0"}
    url = changelist_url() + query
    first = client.post(url, data)
    if not confirm:
        return first
    return client.post(url, {**data, "confirm": "yes"})

