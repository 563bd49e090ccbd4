"""The Django admin's own history ("Recent actions", an object's history) without the objects' text.

Django writes ``str(obj)`` into ``LogEntry.object_repr``: for a memory item or a chat message that is its
content, which would then outlive the item's erase. These admins write the id instead; the erase also
deletes the rows about the user's items and messages (``ltm.people.user_data``, section ``admin_log``).
"""

from __future__ import annotations

import json

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.admin.options import get_content_type_for_model


class IdOnlyLogMixin:
    """Log additions, changes and deletions under the object's id, never its text."""

    def _log_entries(self, request, objects, action_flag, change_message=""):
        if isinstance(change_message, list):
            change_message = json.dumps(change_message)
        entries = [
            LogEntry(
                user_id=request.user.pk, content_type_id=get_content_type_for_model(obj).pk,
                object_id=str(obj.pk), object_repr=str(obj.pk)[:200], action_flag=action_flag,
                change_message=change_message,
            )
            for obj in objects
        ]
        return LogEntry.objects.bulk_create(entries)

    def log_addition(self, request, obj, message):
        return self._log_entries(request, [obj], ADDITION, message)[0]

    def log_change(self, request, obj, message):
        return self._log_entries(request, [obj], CHANGE, message)[0]

    def log_deletions(self, request, queryset):
        return self._log_entries(request, list(queryset), DELETION)
