"""The caller's own data: ``GET /api/v1/me/data/`` exports it, ``POST /api/v1/me/data/erase/`` erases it.

Both act on the signed-in user's platform id only (``roles.platform_user_id``); no user can be named.
The export is exactly what the erase removes (``ltm.people.user_data.user_data_sections``).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryboard.api.serializers import StrictSerializer, error_responses
from memoryboard.ltm.people.user_data import memory_export_payload, user_data_erase
from memoryboard.roles import platform_user_id

ERASE_REASON = "erase all my data"


class EraseRequestSerializer(StrictSerializer):
    confirm = serializers.BooleanField(
        help_text="Must be true: the erase removes every memory item (whatever its state), conversation, "
                  "cached summary, retrieval receipt, pause rule and setting of the caller, and cannot be undone."
    )

    def validate_confirm(self, value: bool) -> bool:
        if value is not True:
            raise serializers.ValidationError("Must be true to erase everything; nothing was changed.")
        return value


class MyDataView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Export everything stored about the caller (by table)",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "`memories` (the import format), one key per other table (rows with their `id`), and `tables` "
            "naming the table behind each key.")), **error_responses(401)},
    )
    def get(self, request):
        return Response(memory_export_payload(user_id=platform_user_id(request.user)))


class MyDataEraseView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Erase everything stored about the caller (no undo)",
        request=EraseRequestSerializer,
        responses={200: inline_serializer("Erased", {
            "erased": serializers.DictField(child=serializers.IntegerField(),
                                            help_text="Rows removed (audit entries: anonymised), by table."),
        }), **error_responses(400, 401)},
    )
    def post(self, request):
        EraseRequestSerializer(data=request.data).is_valid(raise_exception=True)
        erased = user_data_erase(user_id=platform_user_id(request.user), actor=request.user, reason=ERASE_REASON)
        return Response({"erased": {table: len(ids) for table, ids in erased.items()}})
