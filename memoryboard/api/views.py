"""REST API views: thin. Input by a serializer, work by a service or selector, output by a serializer.

Scoping is not repeated here: every memory view starts from ``memory_queryset_for(request.user)`` (the search
from ``memory_scope_for``: the same queryset and a name of its SQL) and
every message view from ``message_queryset_for(request.user)`` (see ``get_queryset``).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import authenticate
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.http import Http404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import authentication, mixins, serializers, status, viewsets
from rest_framework.authtoken.models import Token
from rest_framework.decorators import action, api_view, permission_classes
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryboard import conversations
from memoryboard.agents_config import get_agents_config
from memoryboard.api import serializers as s
from memoryboard.api.exceptions import ApplicationError
from memoryboard.api.filters import CheapLimitOffsetPagination, MemoryFilterBackend, MemoryFilterSet, bounded_int
from memoryboard.api.middleware import read_body_within
from memoryboard.api.permissions import CanApplyMemoryStrategy, CanPlanMemoryStrategy, MemoryAccess, import_target_user
from memoryboard.api.renderers import FAST_JSON_RENDERERS
from memoryboard.api.strategy_requests import collector_paused, context_apply_view, strategy_slot
from memoryboard.api.throttling import SharedScopedRateThrottle, login_is_throttled
from memoryboard.ltm.search.retrieval import memory_search
from memoryboard.ltm.store.expiry import memory_set_expiry
from memoryboard.ltm.store.items import memory_archive, memory_delete_for_user, memory_restore, memory_restore_for_user
from memoryboard.ltm.store.locks import NamespaceLockTimeout
from memoryboard.ltm.store.selectors import memory_queryset_for, memory_scope_for, own_scope_for
from memoryboard.ltm.store.tasks import archive_expired_among
from memoryboard.ltm.store.versions import memory_history
from memoryboard.ltm.write.edits import memory_revert, memory_update
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.models import MemoryFlag, Source
from memoryboard.models.namespaces import build_namespace
from memoryboard.roles import can_change_any_memory
from memoryboard.shared.errors import body_limit_for
from memoryboard.strategies import (
    CONTEXT_STRATEGIES,
    MEMORY_STRATEGIES,
    StrategyConfigError,
    context_strategy_info,
    memory_strategy_info,
)
from memoryboard.strategies.replay import Price

# --- health ----------------------------------------------------------------------------------------


@extend_schema(
    responses={200: inline_serializer("Health", {"status": serializers.CharField(), "database": serializers.CharField()})},
    auth=[],
)
@api_view(["GET"])
@permission_classes([AllowAny])
def health(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return Response({"status": "ok", "database": connection.vendor})


class PingView(APIView):
    """The framework's floor for the load benchmark: DRF's own token authentication (one query) and a
    JSON answer. Not part of the documented API."""

    authentication_classes = [authentication.TokenAuthentication]

    @extend_schema(exclude=True)
    def get(self, request):
        return Response({"pong": True})


# --- auth ------------------------------------------------------------------------------------------


class TokenView(APIView):
    """Exchange a user name and password for an API token (throttled per address)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [SharedScopedRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        request=s.TokenRequestSerializer,
        responses={200: s.TokenSerializer, 400: s.ERROR_RESPONSES[400], 429: OpenApiResponse(s.ErrorSerializer)},
        auth=[],
    )
    def post(self, request):
        data = s.TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        username = data.validated_data["username"]
        if login_is_throttled(request, username):
            raise Throttled(detail="Too many failed sign-ins; try again in a minute.")
        user = authenticate(request=request, username=username, password=data.validated_data["password"])
        if user is None or not user.is_active:
            raise ValidationError({"non_field_errors": ["Unable to sign in with the given credentials."]})
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


# --- memories --------------------------------------------------------------------------------------


@extend_schema_view(
    list=extend_schema(summary="List memories the caller may see",
                       responses={200: s.MemorySerializer(many=True), **s.error_responses(400, 401)}),
    retrieve=extend_schema(summary="One memory", responses={200: s.MemorySerializer, **s.error_responses(401, 404)}),
    partial_update=extend_schema(
        summary="Change content, type and/or expires_at (re-embedded, audited; a new version)",
        request=s.MemoryUpdateSerializer,
        responses={200: s.MemorySerializer, **s.error_responses(400, 401, 403, 404)},
    ),
    destroy=extend_schema(
        summary="Delete: a soft delete for end users (restorable), an archive for support staff",
        responses={204: None, **s.error_responses(401, 403, 404)},
    ),
)
class MemoryViewSet(
    mixins.CreateModelMixin,
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.UpdateModelMixin, mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = s.MemorySerializer
    permission_classes = [MemoryAccess]
    filterset_class = MemoryFilterSet
    filter_backends = [MemoryFilterBackend]
    pagination_class = CheapLimitOffsetPagination
    http_method_names = ["get", "patch", "post", "delete", "head", "options"]
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        paused = MemoryFlag.objects.filter(memory_id=OuterRef("pk"), paused=True)
        return memory_queryset_for(self.request.user).annotate(is_paused=Exists(paused)).order_by("-updated_at", "id")

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        archive_expired_among(page or [])  # shown as expired; a list that meets one archives it at once
        return page

    def retrieve(self, request, *args, **kwargs):
        memory = self.get_object()
        archive_expired_among([memory])
        return Response(self.get_serializer(memory).data)

    @extend_schema(
        summary="Create a memory (through the reconcile step: a repeat reinforces, an update supersedes)",
        request=s.MemoryCreateSerializer,
        responses={201: s.MemoryCreateResultSerializer, 200: s.MemoryCreateResultSerializer,
                   **s.error_responses(400, 401, 403, 503)},
    )
    def create(self, request, *args, **kwargs):
        data = s.MemoryCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        user_id = import_target_user(caller=request.user, requested=values.get("user"))
        agent_id = values.get("agent") or settings.MEMORYBOARD_DEFAULT_AGENT
        agent = get_agents_config().get(agent_id)
        if agent is None or not agent.long_term_memory.enabled:
            raise ValidationError({"agent": ["Unknown agent, or one that keeps no long-term memory."]})
        try:
            result = memory_save_reconciled(
                namespace=build_namespace(agent_namespace=agent.long_term_memory.namespace, user_id=user_id),
                content=values["content"], memory_type=values["type"], agent_id=agent.agent_id,
                source=Source.MANUAL, actor=request.user, expires_at=values.get("expires_at"),
            )
        except NamespaceLockTimeout as exc:
            raise ApplicationError("These memories are being changed by another request; try again.",
                                   status_code=503, code="busy") from exc
        body = s.memory_to_dict(result.memory)
        body.update(decision=result.decision.verdict, reason=result.decision.reason,
                    superseded=result.superseded)
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    def partial_update(self, request, *args, **kwargs):
        memory = self.get_object()
        data = s.MemoryUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with transaction.atomic():
            if "content" in data.validated_data or "type" in data.validated_data:
                memory = memory_update(
                    memory=memory,
                    actor=request.user,
                    content=data.validated_data.get("content"),
                    memory_type=data.validated_data.get("type"),
                )
            if "expires_at" in data.validated_data:
                memory = memory_set_expiry(memory=memory, actor=request.user,
                                           expires_at=data.validated_data["expires_at"])
        return Response(s.MemorySerializer(memory).data)

    def destroy(self, request, *args, **kwargs):
        memory = self.get_object()
        if can_change_any_memory(request.user):
            memory_archive(memory=memory, actor=request.user)
        else:
            memory_delete_for_user(memory=memory, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(summary="Archive (support staff), with the reason shown in the audit log",
                   request=s.ArchiveInputSerializer,
                   responses={200: s.MemorySerializer, **s.error_responses(400, 401, 403, 404)})
    @action(detail=True, methods=["post"])
    def archive(self, request, pk=None):
        memory = self.get_object()
        body = s.ArchiveInputSerializer(data=request.data if isinstance(request.data, dict) else {"reason": request.data})
        body.is_valid(raise_exception=True)
        memory = memory_archive(memory=memory, actor=request.user, note=body.validated_data.get("reason", ""))
        return Response(s.MemorySerializer(memory).data)

    @extend_schema(
        summary="Restore (support staff; end users their own deleted items)",
        request=None,
        responses={200: s.MemorySerializer, **s.error_responses(401, 403, 404)},
    )
    @action(detail=True, methods=["post"])
    def restore(self, request, pk=None):
        memory = self.get_object()
        if can_change_any_memory(request.user):
            memory = memory_restore(memory=memory, actor=request.user)
        elif memory.archived:  # the permission let through only the caller's own deletes
            memory = memory_restore_for_user(memory=memory, actor=request.user)
        return Response(s.MemorySerializer(memory).data)

    @extend_schema(
        summary="The versions of an item's text and type, oldest first",
        responses={200: s.MemoryVersionSerializer(many=True), **s.error_responses(401, 404)},
    )
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def history(self, request, pk=None):
        entries = memory_history(memory=self.get_object())
        return Response(s.MemoryVersionSerializer([e.as_dict() for e in entries], many=True).data)

    @extend_schema(
        summary="Go back to an earlier version's text and type (a new version, audited)",
        request=s.MemoryRevertSerializer,
        responses={200: s.MemorySerializer, **s.error_responses(400, 401, 403, 404)},
    )
    @action(detail=True, methods=["post"], filter_backends=[])
    def revert(self, request, pk=None):
        memory = self.get_object()
        data = s.MemoryRevertSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        memory = memory_revert(memory=memory, actor=request.user, version=data.validated_data["version"])
        return Response(s.MemorySerializer(memory).data)

    @extend_schema(
        summary="Semantic search over the memories the caller may see (active items)",
        parameters=[
            OpenApiParameter("q", OpenApiTypes.STR, required=True, description="What to search for."),
            OpenApiParameter("k", {"type": "integer", "minimum": 1, "maximum": 100},
                             description="How many items, 1..100 (default 10)."),
            OpenApiParameter("explain", OpenApiTypes.BOOL,
                             description="Add each result's score parts (semantic, keyword, type weight, decay, final)."),
            OpenApiParameter("include_superseded", OpenApiTypes.BOOL,
                             description="Also return items that a newer statement superseded (default false)."),
            OpenApiParameter("as_of", OpenApiTypes.DATETIME,
                             description="What was believed then: items valid at this date (start of day, UTC) or "
                                         "date and time, whatever their state now (deleted and rejected excepted)."),
        ],
        responses={200: s.ScoredMemorySerializer(many=True), **s.error_responses(400, 401)},
    )
    @action(detail=False, methods=["get"], pagination_class=None)
    def search(self, request):
        query, k, explain = s.search_params(request.query_params)
        include_superseded, as_of = s.search_validity_params(request.query_params)
        own = own_scope_for(request.user)
        # An end user's scope is their own items: only their pause rules apply.
        scope, scope_key = memory_scope_for(request.user)
        scope = scope.order_by("-updated_at", "id")
        queryset = self.filter_queryset(scope)
        if queryset is not scope:
            scope_key = None  # narrowed by a filter (?agent=, ?type=, …): not the SQL the key names
        items = memory_search(queryset=queryset, query=query, k=k, user_id=own,
                              include_superseded=include_superseded, as_of=as_of, scope_key=scope_key)
        tz = timezone.get_current_timezone()
        results = []
        for item in items:
            item.memory.score = round(float(item.score), 4)
            item.memory.is_paused = False  # a search returns no paused item
            # ScoredMemorySerializer's shape (it documents the response), without building a serializer.
            data = s.memory_to_dict(item.memory, tz)
            if explain and item.parts is not None:
                data["explain"] = item.parts.as_dict()
            results.append(data)
        return Response(results)


# --- conversations ---------------------------------------------------------------------------------


class ConversationViewSet(viewsets.GenericViewSet):
    """Stored conversations (``chat_message``) the caller may read."""

    serializer_class = s.ConversationSerializer
    filter_backends: list = []
    lookup_field = "conversation_id"
    lookup_value_regex = "[^/]+"

    @property
    def pagination_class(self):
        """Messages are paginated; the list of conversations is a plain, bounded list (``limit``), and the
        schema says so (drf-spectacular reads this per action)."""
        return None if getattr(self, "action", None) == "list" else CheapLimitOffsetPagination

    def get_queryset(self):
        return conversations.message_queryset_for(self.request.user)

    @extend_schema(
        summary="Conversations, newest first",
        parameters=[OpenApiParameter("limit", {"type": "integer", "minimum": 1,
                                                "maximum": CheapLimitOffsetPagination.max_limit},
                                     description="1..200 (default 200).")],
        responses={200: s.ConversationSerializer(many=True), **s.error_responses(400, 401)},
    )
    def list(self, request):
        most = CheapLimitOffsetPagination.max_limit
        limit = bounded_int(request, "limit", default=most, minimum=1, maximum=most)
        rows = conversations.conversation_list(queryset=self.get_queryset(), limit=limit)
        return Response(s.ConversationSerializer([row.__dict__ for row in rows], many=True).data)

    @extend_schema(
        summary="Messages of one conversation, oldest first",
        responses={200: s.ChatMessageSerializer(many=True), **s.error_responses(400, 401, 404)},
    )
    @action(detail=True, methods=["get"])
    def messages(self, request, conversation_id=None):
        qs = self.get_queryset().filter(conversation_id=conversation_id).order_by("id")
        page = self.paginate_queryset(qs)
        if not page and self.paginator.offset == 0:
            raise Http404
        return self.get_paginated_response(s.ChatMessageSerializer(page, many=True).data)


# --- strategies ------------------------------------------------------------------------------------


def _info(info) -> dict:
    return {"name": info.name, "description": info.description, "params": [p.to_dict() for p in info.params]}


class StrategyListView(APIView):
    @extend_schema(summary="Context and memory strategies with their parameters",
                   responses={200: s.StrategyListSerializer, **s.error_responses(401)})
    def get(self, request):
        return Response(
            {
                "context": [_info(context_strategy_info(name)) for name in CONTEXT_STRATEGIES],
                "memory": [_info(memory_strategy_info(name)) for name in MEMORY_STRATEGIES],
            }
        )


NAME_PARAMETER = OpenApiParameter(
    "name", OpenApiTypes.STR, OpenApiParameter.PATH, description="Strategy name in any case (trim, SLIDING_WINDOW, ...)."
)


class ContextApplyView(APIView):
    """Run a context strategy on the given messages. Touches no stored data: any signed-in user."""

    renderer_classes = FAST_JSON_RENDERERS

    @classmethod
    def as_view(cls, **initkwargs):
        # The URL serves a token-signed JSON body by the direct path (api.strategy_requests: the same
        # authentication, limits, throttle and errors); this view answers every other request.
        return context_apply_view(super().as_view(**initkwargs))

    @extend_schema(
        summary="Apply a context strategy to messages",
        parameters=[NAME_PARAMETER],
        request=s.ContextApplySerializer,
        responses={200: s.ContextResultSerializer, **s.error_responses(400, 401, 413, 429)},
    )
    def post(self, request, name: str):
        with strategy_slot(request), collector_paused():
            read_body_within(request._request, body_limit_for(request.path))
            values = s.context_apply_input(request.data)
            result = conversations.context_apply(
                name, values["messages"], values["params"],
                format=values["format"], system=values["system"], keep_system=values["keep_system"],
            )
        return Response(result.to_dict())


class ContextReplayView(APIView):
    """Replay messages call by call under context strategies. Touches no stored data: any signed-in user."""

    @extend_schema(
        summary="Replay a conversation call by call under context strategies",
        description="Each user turn and each tool round is a model call. Per strategy, one row per call "
        "(tokens sent, tokens a prompt cache would serve, messages dropped / cleared / summarized, summary "
        "calls) and the totals; with `price`, the estimated cost.",
        request=s.ReplaySerializer,
        responses={200: s.ReplayResultSerializer, **s.error_responses(400, 401, 413, 429)},
    )
    def post(self, request):
        with strategy_slot(request):
            read_body_within(request._request, body_limit_for(request.path))
            values = s.replay_input(request.data)
            try:
                results = conversations.context_replay(
                    values["messages"], [(item["name"], item["params"]) for item in values["strategies"]],
                    format=values.get("format"), system=values.get("system"), cache=values["cache"],
                )
            except StrategyConfigError as exc:  # already named from the body's top (strategies[i].params.…)
                raise ApplicationError(exc.message, field=exc.field) from exc
        price = Price(**values["price"]) if values.get("price") else None
        calls = len(results[0].calls) if results else 0
        body = {"calls": calls, "cache_model": values["cache"].to_dict(),
                "strategies": [r.to_dict(price) for r in results]}
        if price is not None:
            body["price"] = price.to_dict(values["cache"])
        return Response(body)


MEMORY_STRATEGY_RESPONSES = {
    200: s.MemoryPlanSerializer,
    **s.error_responses(400, 401, 403, 404, 413, 429),
    409: OpenApiResponse(s.ErrorSerializer, description="The plan is stale."),
}


def _memory_strategy_schema(summary: str):
    return extend_schema(
        summary=summary, parameters=[NAME_PARAMETER], request=s.MemoryStrategySerializer,
        responses=MEMORY_STRATEGY_RESPONSES,
    )


class _MemoryStrategyView(APIView):
    """Validates the body and the caller's access to the conversation; subclasses run the strategy."""

    renderer_classes = FAST_JSON_RENDERERS

    def post(self, request, name: str):
        with strategy_slot(request):
            data = s.MemoryStrategySerializer(data=request.data)
            data.is_valid(raise_exception=True)
            values = data.validated_data
            # The conversation must be one the caller may read, whatever the role rules say.
            if not conversations.message_queryset_for(request.user).filter(conversation_id=values["conversation_id"]).exists():
                raise conversations.ConversationNotFound(values["conversation_id"])
            result = self.run(request, name, values)
        return Response(result.to_dict())

    def run(self, request, name: str, values: dict):
        raise NotImplementedError


class MemoryPlanView(_MemoryStrategyView):
    permission_classes = [CanPlanMemoryStrategy]

    @_memory_strategy_schema("Dry run of a memory strategy on a stored conversation (support staff, developers)")
    def post(self, request, name: str):
        return super().post(request, name)

    def run(self, request, name, values):
        return conversations.memory_plan(name, conversation_id=values["conversation_id"], params=values["params"])


class MemoryApplyView(_MemoryStrategyView):
    permission_classes = [CanApplyMemoryStrategy]

    @_memory_strategy_schema("Apply a memory strategy to a stored conversation, in one transaction (staff)")
    def post(self, request, name: str):
        return super().post(request, name)

    def run(self, request, name, values):
        return conversations.memory_apply(
            name,
            conversation_id=values["conversation_id"],
            params=values["params"],
            actor=request.user,
            expected_delete_ids=values.get("expected_delete_ids"),
        )


# --- fallbacks -------------------------------------------------------------------------------------


@extend_schema(exclude=True)
@api_view(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
@permission_classes([AllowAny])
def not_found(request, *args, **kwargs):
    """Unknown API URLs answer JSON too."""
    raise Http404
