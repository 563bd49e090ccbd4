"""``POST /api/v1/agents/{agent}/chat``: one turn of the agent runtime for the authenticated user."""

from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryboard.agent.service import (
    AgentLLMUnavailable,
    AgentNotFound,
    AgentStoreUnavailable,
    ConversationNotYours,
    agent_chat,
)
from memoryboard.api.exceptions import ApplicationError, turn_llm_failure, with_retry_after
from memoryboard.api.serializers import ErrorBodySerializer, StrictCharField, error_responses
from memoryboard.conversations import conversation_id_problem

MAX_MESSAGE_CHARS = 20_000


class AgentChatInputSerializer(serializers.Serializer):
    message = StrictCharField(min_length=1, max_length=MAX_MESSAGE_CHARS, trim_whitespace=False)
    conversation_id = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=255)

    def validate_message(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("The message must not be blank."))
        return value

    def validate_conversation_id(self, value: str | None) -> str | None:
        if value:
            problem = conversation_id_problem(value)
            if problem:
                raise serializers.ValidationError(problem)
        return value


class MemoryUsedSerializer(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField()
    content = serializers.CharField()
    score = serializers.FloatField()


class MemoryChangeSerializer(serializers.Serializer):
    """One item the turn changed, so a client can say "Memory updated" and link to it."""

    change = serializers.ChoiceField(
        choices=["saved", "pending", "replaced", "updated", "forgotten", "restored"],
        help_text=("saved: stored and in use; pending: stored, waits for review before it is used; replaced: no "
                   "longer used, `replaced_by` took its place; updated: reworded (`before` holds the old text); "
                   "forgotten: no longer used, nothing in its place; restored: in use again."))
    id = serializers.CharField()
    content = serializers.CharField()
    type = serializers.CharField()
    state = serializers.CharField(help_text="The item's state after the turn (active, pending_review, superseded, …).")
    url = serializers.URLField(help_text="The item in this API (`GET /api/v1/memories/{id}/`).")
    replaced_by = serializers.CharField(required=False, help_text="For `replaced`: the item that took its place.")
    replaced_by_url = serializers.URLField(required=False)
    before = serializers.CharField(required=False, help_text="For `updated`: the text before the turn.")


class AgentChatOutputSerializer(serializers.Serializer):
    conversation_id = serializers.CharField()
    reply = serializers.CharField(allow_blank=True)
    memories_used = MemoryUsedSerializer(many=True)
    tool_calls = serializers.ListField(child=serializers.DictField())
    extraction = serializers.CharField(help_text=(
        "The extraction of new memories from this turn: `queued` (it runs after the reply; its changes are not "
        "in `memory_changes`) or why it was skipped."))
    memory_changes = MemoryChangeSerializer(many=True, help_text=(
        "What this turn changed in the caller's long-term memory (its memory tool calls), item by item; "
        "empty when nothing changed."))


def _with_urls(request, changes: list[dict]) -> list[dict]:
    def url(pk: str) -> str:
        return request.build_absolute_uri(reverse("memory-detail", args=[pk]))

    return [{**c, "url": url(c["id"]), **({"replaced_by_url": url(c["replaced_by"])} if c.get("replaced_by") else {})}
            for c in changes]


class AgentChatErrorSerializer(serializers.Serializer):
    """The error shape, plus the conversation the user's message was stored in (502, 503)."""

    error = ErrorBodySerializer()
    conversation_id = serializers.CharField(required=False)


class AgentChatView(APIView):
    """Send a message to an agent; the reply uses and may update the caller's long-term memory.

    The user's message is stored before the model is called: when the model is unavailable the answer
    is a 502 (``llm_unavailable``) carrying the ``conversation_id``, and the message is kept.
    """

    @extend_schema(
        request=AgentChatInputSerializer,
        responses={
            200: AgentChatOutputSerializer,
            **error_responses(400, 401, 404, 413),
            502: OpenApiResponse(AgentChatErrorSerializer, description=(
                "The language model failed; the message was stored in `conversation_id`.")),
            503: OpenApiResponse(AgentChatErrorSerializer, description=(
                "The database failed; with `conversation_id` when the message was stored, else nothing was.")),
        },
    )
    def post(self, request, agent: str):
        data = AgentChatInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation_id = data.validated_data.get("conversation_id") or None
        try:
            result = agent_chat(
                user=request.user, agent_id=agent, conversation_id=conversation_id,
                message=data.validated_data["message"],
            )
        except AgentNotFound as exc:
            raise ApplicationError(
                _("Unknown agent %(agent)s.") % {"agent": exc.agent_id}, field="agent",
                status_code=status.HTTP_404_NOT_FOUND, code="not_found",
            ) from exc
        except ConversationNotYours as exc:
            raise ApplicationError(
                _("No such conversation for this agent."), field="conversation_id",
                status_code=status.HTTP_404_NOT_FOUND, code="not_found",
            ) from exc
        except AgentLLMUnavailable as exc:
            code, message = turn_llm_failure(exc.reason)
            return Response(
                {
                    "error": {"code": code, "message": message, "fields": {}},
                    "conversation_id": exc.conversation_id,
                },
                status=status.HTTP_502_BAD_GATEWAY,
            )
        except AgentStoreUnavailable as exc:
            return with_retry_after(Response(
                {
                    "error": {
                        "code": "unavailable",
                        "message": _("The database became unavailable during the reply. Your message was saved; "
                                     "the reply was not. Try again."),
                        "fields": {},
                    },
                    "conversation_id": exc.conversation_id,
                },
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            ))
        body = result.to_dict()
        body["memory_changes"] = _with_urls(request, body["memory_changes"])
        return Response(AgentChatOutputSerializer(body).data)
