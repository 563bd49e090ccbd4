"""Input and output shapes of the API. Thin: validation of types here, rules in the services."""

from __future__ import annotations

from datetime import datetime, time, timezone as dt_timezone

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from memoryboard.ltm.search.retrieval import MAX_K, MAX_QUERY_CHARS
from memoryboard.ltm.store.items import MAX_CONTENT_CHARS
from memoryboard.ltm.store.states import memory_state
from memoryboard.models import ChatMessage, LongTermMemory, MemoryState, MemoryType
from memoryboard.models.namespaces import parse_namespace
from memoryboard.strategies.errors import StrategyConfigError
from memoryboard.strategies.prompt_cache import CACHE_MODELS, CacheModel
from memoryboard.strategies.replay import MAX_STRATEGIES as MAX_REPLAY_STRATEGIES


class StrictSerializer(serializers.Serializer):
    """Rejects keys it does not know (a ``namespace`` or ``_userId`` in a body is an error, not ignored)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A string, and only a string: DRF's CharField would turn ``5`` into ``"5"``."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


# --- memories ------------------------------------------------------------------------------------


class ArchiveInputSerializer(StrictSerializer):
    reason = StrictCharField(required=False, allow_blank=True, max_length=200,
                             help_text="Why (optional): shown in the audit log next to the archive.")


class MemorySerializer(serializers.ModelSerializer):
    agent = serializers.SerializerMethodField()
    user = serializers.SerializerMethodField()
    type = serializers.CharField(source="memory_type", read_only=True)
    source = serializers.CharField(read_only=True)
    content = serializers.CharField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = LongTermMemory
        fields = [
            "id", "namespace", "agent", "user", "type", "source", "content", "relevance_score",
            "access_count", "last_accessed_at", "created_at", "updated_at", "archived", "archived_at",
            "archived_reason", "state", "valid_from", "valid_to", "superseded_by", "expires_at", "conflict_with",
        ]
        read_only_fields = fields

    # Validity (DESIGN 1.6): documented here, built by memory_to_dict.
    state = serializers.SerializerMethodField(help_text="active, paused, archived, deleted, superseded, expired, …")
    valid_from = serializers.DateTimeField(read_only=True, help_text="Since when the statement holds.")
    valid_to = serializers.DateTimeField(read_only=True, allow_null=True,
                                         help_text="Until when it held (set when superseded).")
    superseded_by = serializers.CharField(read_only=True, allow_null=True, help_text="The item that replaced it.")
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)
    conflict_with = serializers.ListField(child=serializers.CharField(), read_only=True,
                                          help_text="Items it conflicts with, waiting for review.")

    @extend_schema_field(OpenApiTypes.STR)
    def get_agent(self, obj: LongTermMemory) -> str | None:
        return obj.agent_namespace or obj.agent_id or None

    @extend_schema_field(OpenApiTypes.STR)
    def get_user(self, obj: LongTermMemory) -> str | None:
        return obj.user_id

    @extend_schema_field(serializers.ChoiceField(choices=MemoryState.choices))
    def get_state(self, obj: LongTermMemory) -> str:
        return memory_state(obj, paused=getattr(obj, "is_paused", None))

    def to_representation(self, instance: LongTermMemory) -> dict:
        # The same output as the declared fields, built directly: DRF's per-field machinery cost
        # ~0.3 ms per item, the largest part of a list or search request (benchmarks/load.py).
        return memory_to_dict(instance)


def _datetime(value, tz) -> str | None:
    """DRF's ISO 8601 output in the current time zone ``tz`` (UTC as ``Z``)."""
    if value is None:
        return None
    if value.tzinfo is not None and value.tzinfo is not tz:
        value = value.astimezone(tz)
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def memory_to_dict(memory: LongTermMemory, tz=None) -> dict:
    """The API shape of one memory (see MemorySerializer's fields); ``score`` when the search set it.

    ``tz``: the current time zone, when the caller already has it (its lookup costs more than the
    formatting)."""
    value = memory.value_json if isinstance(memory.value_json, dict) else {}
    namespace = parse_namespace(memory.namespace)
    tz = tz or timezone.get_current_timezone()
    data = {
        "id": memory.pk,
        "namespace": memory.namespace,
        "agent": (namespace.agent if namespace else None) or str(value.get("agentId", "")) or None,
        "user": namespace.user_id if namespace else None,
        "type": str(value.get("type", "")),
        "source": str(value.get("source", "")),
        "content": str(value.get("content", "")),
        "relevance_score": memory.relevance_score,
        "access_count": memory.access_count,
        "last_accessed_at": _datetime(memory.last_accessed_at, tz),
        "created_at": _datetime(memory.created_at, tz),
        "updated_at": _datetime(memory.updated_at, tz),
        "archived": memory.archived,
        "archived_at": _datetime(memory.archived_at, tz),
        "archived_reason": memory.archived_reason,
        "state": memory_state(memory, paused=getattr(memory, "is_paused", None)),
        "valid_from": _datetime(memory.valid_from, tz),
        "valid_to": _datetime(memory.valid_to, tz),
        "superseded_by": memory.superseded_by,
        "expires_at": _datetime(memory.expires_at, tz),
        "conflict_with": memory.conflict_with,
    }
    score = getattr(memory, "score", None)
    if score is not None:
        data["score"] = score
    return data


class ScoreExplanationSerializer(serializers.Serializer):
    """The parts of a search score (``explain=true``), see docs/retrieval.md."""

    cosine = serializers.FloatField()
    centrality = serializers.FloatField()
    semantic = serializers.FloatField()
    keyword = serializers.FloatField()
    keyword_z = serializers.FloatField()
    gate = serializers.FloatField()
    match = serializers.FloatField()
    relevance = serializers.FloatField()
    attribute = serializers.FloatField()
    time = serializers.FloatField()
    type_weight = serializers.FloatField()
    decay = serializers.FloatField()
    redundancy = serializers.FloatField()
    someone_else = serializers.FloatField()
    final = serializers.FloatField()


class ScoredMemorySerializer(MemorySerializer):
    score = serializers.FloatField(read_only=True)
    explain = ScoreExplanationSerializer(required=False)  # only with explain=true: not required in the schema

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "score", "explain"]
        read_only_fields = fields


class MemoryUpdateSerializer(StrictSerializer):
    content = StrictCharField(required=False, max_length=MAX_CONTENT_CHARS)
    type = StrictCharField(required=False, max_length=32)
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text="When the item stops being used (ISO 8601); null: never. Archived as expired by the cleanup.",
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError({"content": ["Give content, type and/or expires_at to change."]})
        return attrs


class MemoryRevertSerializer(StrictSerializer):
    version = serializers.IntegerField(min_value=1)


class VersionSideSerializer(serializers.Serializer):
    content = serializers.CharField()
    type = serializers.CharField()


class MemoryVersionSerializer(serializers.Serializer):
    """One version of an item's text and type (``GET /api/v1/memories/{id}/history/``)."""

    version = serializers.IntegerField()
    event = serializers.CharField(help_text="create, edit, import, extract, merge, revert, reconcile")
    who = serializers.CharField(help_text="The display name of who changed it, or the agent / system.")
    when = serializers.DateTimeField()
    why = serializers.CharField(help_text="The reason given with the change (may be empty).")
    before = VersionSideSerializer(allow_null=True, help_text="Null for version 1 (the item's creation).")
    after = VersionSideSerializer()


class MemoryCreateSerializer(StrictSerializer):
    """``POST /api/v1/memories/``: one statement, through the reconcile step."""

    content = StrictCharField(max_length=MAX_CONTENT_CHARS)
    type = serializers.ChoiceField(choices=[(t, t) for t in MemoryType.values], default=MemoryType.FACT)
    agent = StrictCharField(required=False, max_length=100, help_text="The agent (default: the default agent).")
    expires_at = serializers.DateTimeField(required=False, allow_null=True,
                                           help_text="When the item stops being used (ISO 8601).")
    user = StrictCharField(required=False, max_length=100,
                           help_text="Support staff only: the platform user id to create for (default: yourself).")

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("type"), str):
            data = {**data, "type": data["type"].upper()}
        return super().to_internal_value(data)

    def validate_expires_at(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("Lies in the past.")
        return value


class MemoryCreateResultSerializer(MemorySerializer):
    """The item stored (201) or the existing item a repeat reinforced (200), and what was decided."""

    decision = serializers.ChoiceField(choices=[(v, v) for v in ("same", "update", "new", "conflict")], read_only=True)
    reason = serializers.CharField(read_only=True)
    superseded = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "decision", "reason", "superseded"]
        read_only_fields = fields


_SEARCH_Q = serializers.CharField(max_length=MAX_QUERY_CHARS, trim_whitespace=True)
_SEARCH_K = serializers.IntegerField(min_value=1, max_value=MAX_K)
_SEARCH_EXPLAIN = serializers.BooleanField()
_SEARCH_INCLUDE_SUPERSEDED = serializers.BooleanField()
_SEARCH_AS_OF = serializers.DateTimeField()
_SEARCH_AS_OF_DATE = serializers.DateField()


def _as_of(raw):
    """A date (its start, UTC) or an ISO 8601 date and time."""
    if isinstance(raw, str) and len(raw.strip()) == 10:
        day = _SEARCH_AS_OF_DATE.run_validation(raw.strip())
        return datetime.combine(day, time.min, tzinfo=dt_timezone.utc)
    return _SEARCH_AS_OF.run_validation(raw)


def search_params(data) -> tuple[str, int, bool]:
    """``q`` (required, at most 2000 characters), ``k`` (1..100, default 10) and ``explain`` (a boolean,
    default false) of a search, checked by DRF's own fields (same messages as a serializer, without
    building one per request). :func:`search_validity_params` reads the validity options.

    Raises:
        ValidationError: naming each field at fault.
    """
    errors: dict[str, list] = {}
    values = {}
    for name, field, default in (("q", _SEARCH_Q, empty), ("k", _SEARCH_K, 10), ("explain", _SEARCH_EXPLAIN, False)):
        raw = data.get(name, empty)
        if raw is empty and default is not empty:
            values[name] = default
            continue
        try:
            values[name] = field.run_validation(raw)
        except serializers.ValidationError as exc:
            errors[name] = exc.detail
    if errors:
        raise serializers.ValidationError(errors)
    return values["q"], values["k"], values["explain"]


def search_validity_params(data) -> tuple[bool, object]:
    """``include_superseded`` (a boolean, default false) and ``as_of`` (a date or date and time, default
    none) of a search.

    Raises:
        ValidationError: naming each field at fault.
    """
    errors: dict[str, list] = {}
    include, as_of = False, None
    if "include_superseded" in data:
        try:
            include = _SEARCH_INCLUDE_SUPERSEDED.run_validation(data.get("include_superseded"))
        except serializers.ValidationError as exc:
            errors["include_superseded"] = exc.detail
    if data.get("as_of") not in (None, ""):
        try:
            as_of = _as_of(data.get("as_of"))
        except serializers.ValidationError as exc:
            errors["as_of"] = exc.detail
    if errors:
        raise serializers.ValidationError(errors)
    return include, as_of


# --- conversations -------------------------------------------------------------------------------


class ChatMessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChatMessage
        fields = ["id", "conversation_id", "agent_id", "user_id", "role", "content", "metadata", "created_at"]
        read_only_fields = fields


class ConversationSerializer(serializers.Serializer):
    conversation_id = serializers.CharField()
    agent_id = serializers.CharField()
    user_id = serializers.CharField()
    messages = serializers.IntegerField()
    first_id = serializers.IntegerField()
    last_at = serializers.DateTimeField()


# --- strategies ----------------------------------------------------------------------------------


MAX_STRATEGY_MESSAGES = 200_000


class ContextApplySerializer(StrictSerializer):
    """Documents the body of ``POST /api/v1/strategies/context/{name}/apply``.

    The view does not run it: DRF's per-field validation of every message cost more than the strategy
    itself (``benchmarks/strategies.py``). :func:`context_apply_input` checks the outer shape and the
    strategy package's reader checks and converts each message in the same pass, naming the field at fault.
    """

    messages = serializers.ListField(
        child=serializers.JSONField(), allow_empty=True, max_length=MAX_STRATEGY_MESSAGES,
        help_text="OpenAI Chat Completions messages or Anthropic Messages turns (tool calls included).",
    )
    params = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False, default=dict)
    format = serializers.ChoiceField(
        choices=["openai", "anthropic"], required=False, allow_null=True,
        help_text="The messages' format; detected when absent. The answer uses the same format.",
    )
    system = serializers.JSONField(
        required=False, allow_null=True, help_text="Anthropic's top-level system prompt, given back unchanged."
    )
    keep_system = serializers.BooleanField(
        required=False, default=False,
        help_text="Keep the leading system messages as they are; the strategy acts on the rest "
        "(the agent runtime always does).",
    )


def _messages_shape_error(messages) -> str | None:
    """What is wrong with a strategy body's ``messages`` as a whole (each message is the reader's job)."""
    if messages is empty:
        return "This field is required."
    if not isinstance(messages, list):
        return "Expected a list of messages."
    if len(messages) > MAX_STRATEGY_MESSAGES:
        return f"Ensure this field has no more than {MAX_STRATEGY_MESSAGES} elements."
    return None


def context_apply_input(data) -> dict:
    """The outer shape of a context-apply body, checked without touching the messages one by one.

    Raises:
        ValidationError: naming each field at fault (``messages``, ``params``, ``format``, ``keep_system``,
            an unknown key).
    """
    if not isinstance(data, dict):
        raise serializers.ValidationError({"non_field_errors": ["The body must be a JSON object."]})
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(data) - set(ContextApplySerializer._declared_fields))
    for key in unknown:
        errors[key] = ["Unknown field."]
    messages = data.get("messages", empty)
    if problem := _messages_shape_error(messages):
        errors["messages"] = [problem]
    params = data.get("params")
    if params is not None and not isinstance(params, dict):
        errors["params"] = ["Expected an object."]
    fmt = data.get("format")
    if fmt is not None and fmt not in ("openai", "anthropic"):
        errors["format"] = ['Expected "openai" or "anthropic".']
    keep_system = data.get("keep_system", False)
    if not isinstance(keep_system, bool):
        errors["keep_system"] = ["Must be a valid boolean."]
    if errors:
        raise serializers.ValidationError(errors)
    return {"messages": messages, "params": params or {}, "format": fmt, "system": data.get("system"),
            "keep_system": keep_system}


class MemoryStrategySerializer(StrictSerializer):
    conversation_id = StrictCharField(max_length=255)
    params = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False, default=dict)
    expected_delete_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, allow_null=True, max_length=1_000_000
    )


class ContextResultSerializer(serializers.Serializer):
    """Documents ``ContextResult.to_dict()``; the view returns that dict as is.

    Each index list holding more than 1,000 entries is left out and given as ``<name>_ranges`` instead.
    """

    strategy = serializers.CharField()
    format = serializers.ChoiceField(choices=["openai", "anthropic"])
    messages = serializers.ListField(
        child=serializers.JSONField(), help_text="In the input's format; a kept message exactly as it came in."
    )
    system = serializers.JSONField(required=False, help_text="Anthropic's top-level system prompt, unchanged.")
    kept = serializers.ListField(child=serializers.IntegerField(), required=False)
    dropped = serializers.ListField(child=serializers.IntegerField(), required=False)
    summarized = serializers.ListField(child=serializers.IntegerField(), required=False)
    cleared = serializers.ListField(child=serializers.IntegerField(), required=False)
    kept_ranges = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()), required=False)
    dropped_ranges = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()), required=False)
    summarized_ranges = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()), required=False
    )
    cleared_ranges = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()), required=False)
    tokens_before = serializers.FloatField()
    tokens_after = serializers.FloatField()
    llm_calls = serializers.IntegerField()
    fallback = serializers.CharField(allow_null=True)
    saved_ratio = serializers.FloatField()


class MemoryPlanSerializer(serializers.Serializer):
    """Documents ``MemoryPlan.to_dict()``; the view returns that dict as is."""

    strategy = serializers.CharField()
    delete_ids = serializers.ListField(child=serializers.IntegerField())
    inserts = serializers.ListField(child=serializers.DictField())
    keep_ids = serializers.ListField(child=serializers.IntegerField())
    llm_calls = serializers.IntegerField()
    fallback = serializers.CharField(allow_null=True)
    tokens_before = serializers.FloatField()
    tokens_after = serializers.FloatField()
    saved_ratio = serializers.FloatField()


class ParamSpecSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    default = serializers.JSONField()
    description = serializers.CharField()
    min = serializers.IntegerField(allow_null=True)
    max = serializers.IntegerField(allow_null=True)
    choices = serializers.ListField(child=serializers.CharField())


class StrategyInfoSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    params = ParamSpecSerializer(many=True)


class StrategyListSerializer(serializers.Serializer):
    context = StrategyInfoSerializer(many=True)
    memory = StrategyInfoSerializer(many=True)


# --- auth and errors -----------------------------------------------------------------------------


class TokenRequestSerializer(StrictSerializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    fields = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))


class ErrorSerializer(serializers.Serializer):
    """The one error shape of the API."""

    error = ErrorBodySerializer()


# The error responses every operation documents, by status (``error_responses(400, 401)``).
ERROR_RESPONSES = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid input; `fields` names the field at fault."),
    401: OpenApiResponse(ErrorSerializer, description="Not signed in."),
    403: OpenApiResponse(ErrorSerializer, description="The caller's role may not do this."),
    404: OpenApiResponse(ErrorSerializer, description="Not found, or not the caller's."),
    405: OpenApiResponse(ErrorSerializer, description="Method not allowed."),
    409: OpenApiResponse(ErrorSerializer, description="The data changed since the plan; nothing was changed."),
    413: OpenApiResponse(ErrorSerializer, description="The body is too large."),
    429: OpenApiResponse(ErrorSerializer, description="Too many attempts; try again later."),
    502: OpenApiResponse(ErrorSerializer, description="The language model failed."),
    503: OpenApiResponse(ErrorSerializer, description="The database is unavailable; nothing was changed."),
}


def error_responses(*codes: int) -> dict:
    """``{status: OpenApiResponse}`` of these statuses, for ``extend_schema(responses=...)``."""
    return {code: ERROR_RESPONSES[code] for code in codes}


class ReplayStrategySerializer(StrictSerializer):
    name = serializers.CharField(help_text="A context strategy in any case (trim, SLIDING_WINDOW, ...).")
    params = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False, default=dict)


class PriceSerializer(StrictSerializer):
    input = serializers.FloatField(min_value=0, max_value=10_000, help_text="US dollars per million input tokens.")
    cached_input = serializers.FloatField(
        min_value=0, max_value=10_000, help_text="US dollars per million tokens read from the prompt cache.")
    output = serializers.FloatField(min_value=0, max_value=10_000, help_text="US dollars per million output tokens.")
    cache_write = serializers.FloatField(
        min_value=0, max_value=10_000, required=False, allow_null=True,
        help_text="US dollars per million tokens written to the cache; omitted: the input price times the cache "
        "model's write multiplier (anthropic: 1.25 for 300 s, 2 for 3600 s; others 1).")


class ReplayOptionsSerializer(StrictSerializer):
    """Everything of a replay body but the messages (checked by the strategy package's reader, as for
    context-apply: see :class:`ContextApplySerializer`)."""

    messages = serializers.JSONField(required=False, allow_null=True)
    strategies = ReplayStrategySerializer(many=True, allow_empty=False, max_length=MAX_REPLAY_STRATEGIES)
    format = serializers.ChoiceField(choices=["openai", "anthropic"], required=False, allow_null=True)
    system = serializers.JSONField(required=False, allow_null=True)
    price = PriceSerializer(required=False, help_text="Prices for the estimated cost (omit for no cost).")
    cache_model = serializers.ChoiceField(
        choices=list(CACHE_MODELS), required=False, default="ideal",
        help_text="How the prompt cache bills the calls: ideal (every repeated leading message), openai "
        "(prompts of 1,024+ tokens, 128-token steps, idle expiry) or anthropic (breakpoints on the system "
        "prompt and the last message, a minimum per model, writes and reads priced apart).")
    cache_ttl_seconds = serializers.IntegerField(
        required=False, min_value=1, max_value=86_400,
        help_text="openai: idle seconds before a prefix is gone (default 300); anthropic: 300 or 3600.")
    cache_min_tokens = serializers.IntegerField(
        required=False, min_value=1, max_value=100_000,
        help_text="anthropic: the model's minimum cacheable prompt (1,024 to 4,096; default 1,024).")
    seconds_between_calls = serializers.FloatField(
        required=False, min_value=0, max_value=7 * 24 * 3600,
        help_text="Time between calls when the messages carry no created_at / timestamp (default 30).")


def replay_input(data) -> dict:
    """A replay body checked: the messages' outer shape here, each message later by the reader.

    Raises:
        ValidationError: naming each field at fault (``strategies[1].name`` as ``strategies`` → index → field).
    """
    if not isinstance(data, dict):
        raise serializers.ValidationError({"non_field_errors": ["The body must be a JSON object."]})
    messages = data.get("messages", empty)
    errors: dict = {}
    if problem := _messages_shape_error(messages):
        errors["messages"] = [problem]
    options = ReplayOptionsSerializer(data={**data, "messages": None})
    if not options.is_valid():
        for key, detail in options.errors.items():
            if key == "strategies" and isinstance(detail, dict):
                # DRF keys a list's errors by position: named as ``strategies[1].name`` like messages[3].role.
                for index, item in detail.items():
                    errors["strategies" if index == "non_field_errors" else f"strategies[{index}]"] = item
            elif key != "messages":
                errors[key] = detail
    if errors:
        raise serializers.ValidationError(errors)
    values = dict(options.validated_data)
    values["messages"] = messages
    cache = {"kind": values.pop("cache_model", "ideal")}
    for key, name in (("cache_ttl_seconds", "ttl_seconds"), ("cache_min_tokens", "min_tokens"),
                      ("seconds_between_calls", "seconds_between_calls")):
        if key in values:
            cache[name] = values.pop(key)
    try:
        values["cache"] = CacheModel(**cache)
    except StrategyConfigError as exc:
        raise serializers.ValidationError({exc.field: [exc.message]}) from None
    return values


class ReplayCallSerializer(serializers.Serializer):
    call = serializers.IntegerField(help_text="1 for the first model call.")
    upto = serializers.IntegerField(help_text="How many input messages the call had.")
    sent_tokens = serializers.IntegerField(help_text="Estimated tokens of the call's whole input.")
    kind = serializers.ChoiceField(choices=["agent", "summary"],
                                   help_text="agent: the agent's call; summary: a summarizer call made before it.")
    at = serializers.FloatField(help_text="Seconds from the first call (the trace's timestamps, or the fixed gap).")
    cached_tokens = serializers.IntegerField(help_text="The same as cache_read_tokens.")
    cache_read_tokens = serializers.IntegerField(help_text="Input tokens served by the prompt cache.")
    cache_write_tokens = serializers.IntegerField(help_text="Input tokens written to the prompt cache (anthropic).")
    uncached_tokens = serializers.IntegerField(help_text="Input tokens at the full input price.")
    output_tokens = serializers.IntegerField(help_text="Estimated tokens of the reply (or the summary) that followed.")
    cost = serializers.FloatField(required=False, help_text="US dollars of this call, when a price was given.")
    sent_messages = serializers.IntegerField()
    kept = serializers.IntegerField()
    dropped = serializers.IntegerField()
    summarized = serializers.IntegerField()
    cleared = serializers.IntegerField()
    summary_calls = serializers.IntegerField()
    fallback = serializers.CharField(allow_null=True)
    lost_turns = serializers.IntegerField(
        help_text="Earlier exchanges (a question and the reply that closed its turn) whose question or reply "
        "this call's input lost (neither kept nor summarized)."
    )


class ReplayTotalsSerializer(serializers.Serializer):
    calls = serializers.IntegerField(help_text="The agent's calls.")
    sent_tokens = serializers.IntegerField()
    cached_tokens = serializers.IntegerField()
    cache_read_tokens = serializers.IntegerField()
    cache_write_tokens = serializers.IntegerField()
    uncached_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    summary_calls = serializers.IntegerField()
    summary_sent_tokens = serializers.IntegerField(help_text="Input tokens of the summary calls.")
    summary_cached_tokens = serializers.IntegerField()
    summary_cache_write_tokens = serializers.IntegerField()
    summary_uncached_tokens = serializers.IntegerField()
    summary_output_tokens = serializers.IntegerField()
    most_lost_turns = serializers.IntegerField(help_text="The most exchanges any one call lost.")
    cost = serializers.FloatField(required=False, help_text="US dollars of every call: the agent's and the summaries'.")
    summary_cost = serializers.FloatField(required=False, help_text="The summary calls' part of the cost.")


class StrategyReplaySerializer(serializers.Serializer):
    name = serializers.CharField()
    params = serializers.DictField()
    cache_model = serializers.CharField()
    clock = serializers.ChoiceField(choices=["timestamps", "gap"], help_text="Where the times between calls came "
                                    "from: the messages' created_at / timestamp, or seconds_between_calls.")
    rows = ReplayCallSerializer(many=True, help_text="The agent's calls.")
    summary_rows = ReplayCallSerializer(many=True, help_text="The summarizer's calls (kind summary).")
    totals = ReplayTotalsSerializer()
    cost = serializers.FloatField(required=False, help_text="Estimated US dollars of every call, when a price was given.")


class ReplaySerializer(ReplayOptionsSerializer):
    """Documents the body of ``POST /api/v1/strategies/replay``."""

    messages = serializers.ListField(
        child=serializers.JSONField(), max_length=MAX_STRATEGY_MESSAGES,
        help_text="OpenAI Chat Completions messages or Anthropic Messages turns (tool calls included).",
    )


class ReplayResultSerializer(serializers.Serializer):
    calls = serializers.IntegerField()
    cache_model = serializers.DictField(help_text="The cache model and its settings.")
    price = serializers.DictField(required=False, help_text="The prices used, cache_write resolved.")
    strategies = StrategyReplaySerializer(many=True)
