"""Pieces several admin pages share: read-only pages, links to people, objects that are gone."""

from __future__ import annotations

import json
from urllib.parse import quote

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext

from memoryboard.admin.paginator import CappedChangeList
from memoryboard.roles import is_developer
from memoryboard.users import attach_people


class ReadOnlyAdminMixin:
    """No add, change or delete for anyone; viewing follows the model's view permission."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def pretty_json(value) -> str:
    """Indented JSON in a <pre>, escaped (memory content may hold markup)."""
    if value is None:
        return "—"
    return format_html('<pre class="mb-json">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False,
                                                                  sort_keys=True, default=str))


URL_SAFE = "!$&'()*+,;=/~:@"  # what reverse() leaves unquoted


class GoneObjectMixin:
    """An address of an object that no longer exists (an old link, a purged item) says so in words to
    support and goes back to the list; developers keep Django's message with the id."""

    def _get_obj_does_not_exist_redirect(self, request, opts, object_id):
        if is_developer(request.user):
            return super()._get_obj_does_not_exist_redirect(request, opts, object_id)
        self.message_user(request, gettext("This %(name)s no longer exists: it was deleted, purged or erased.")
                          % {"name": opts.verbose_name}, messages.WARNING)
        return HttpResponseRedirect(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))


def person_link(p) -> str:
    """A user as support knows them: the name linked to their user page, and the platform id."""
    if p is None:
        return "—"
    url = reverse("people") + quote(p.user_id, safe=URL_SAFE) + "/"  # reverse("person"), without a resolver per row
    if p.name == p.user_id:
        return format_html('<a href="{}">{}</a>', url, p.user_id)
    return format_html('<a href="{}">{}</a> <span class="mb-uid">{}</span>', url, p.name, p.user_id)


class PeopleChangeList(CappedChangeList):
    """A changelist whose rows carry ``person`` from one user directory lookup for the page."""

    people_attr = "user_id"

    def get_results(self, request):
        super().get_results(request)
        self.result_list = attach_people(self.result_list, attr=self.people_attr)
