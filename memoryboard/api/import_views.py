"""``POST /api/v1/memories/import``: bring memories in (memoryboard's export or a plain JSON list)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryboard.api.exceptions import ApplicationError
from memoryboard.api.permissions import import_target_user
from memoryboard.api.serializers import StrictCharField, StrictSerializer, error_responses
from memoryboard.ltm.write.importing import MODES, MemoryImportError, memory_import
from memoryboard.shared.errors import error_body


class MemoryImportInputSerializer(StrictSerializer):
    items = serializers.JSONField(help_text="A list of {content, type?, created_at?, agent?} or an export's memories.")
    mode = serializers.ChoiceField(choices=MODES, default="skip")
    dry_run = serializers.BooleanField(default=True)
    agent = StrictCharField(required=False, max_length=100, help_text="Agent of rows that name none.")
    user = StrictCharField(required=False, max_length=100, help_text="Staff only: the platform user id to import for.")


ImportSummarySerializer = inline_serializer("MemoryImportSummary", {
    "new": serializers.IntegerField(),
    "duplicate": serializers.IntegerField(),
    "restored": serializers.IntegerField(help_text="Rows whose item the user had deleted: that item comes back."),
    "invalid": serializers.ListField(child=serializers.DictField()),
    "imported": serializers.IntegerField(),
    "archived_skipped": serializers.IntegerField(),
    "dry_run": serializers.BooleanField(),
    "outcome": serializers.DictField(help_text=(
        "What the import does (a dry run: would do), computed by running it and, for a dry run, rolling it "
        "back: created, replaced ({old, new}), changed ({before, after}), lost, restored, removed, kept; "
        "each item {id, content, type, state}.")),
})


class MemoryImportView(APIView):
    """Check (``dry_run``, the default) or apply an import into the caller's own namespaces.

    Nothing is written unless every row is valid; then everything is written in one transaction, each
    item embedded and audited. Invalid rows are listed by ``index`` and ``field``.
    """

    @extend_schema(request=MemoryImportInputSerializer,
                   responses={200: ImportSummarySerializer, **error_responses(400, 401, 403, 413, 503)})
    def post(self, request):
        data = MemoryImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        user_id = import_target_user(caller=request.user, requested=values.get("user"))
        try:
            summary = memory_import(items=values["items"], user_id=user_id, actor=request.user, mode=values["mode"],
                                    dry_run=values["dry_run"], agent_id=values.get("agent"))
        except MemoryImportError as exc:
            raise ApplicationError(exc.message, field=exc.field) from exc
        if summary.invalid and not summary.dry_run:
            fields = {f"items[{e['index']}].{e['field']}": [e["message"]] for e in summary.invalid}
            message = _("%(count)d invalid items; nothing was imported.") % {"count": len(summary.invalid)}
            return Response({**error_body("invalid", message, fields), **summary.to_dict()},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response({**summary.to_dict(), "outcome": summary.outcome.as_dict()})
