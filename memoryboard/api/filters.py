"""Query filters and pagination of the API's lists."""

from __future__ import annotations

from collections import OrderedDict

import django_filters
from django.utils.translation import gettext_lazy as _
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from memoryboard.ltm.store.selectors import filter_memories
from memoryboard.models import MemoryType, Source

MAX_OFFSET = 10_000_000


class MemoryFilterSet(django_filters.FilterSet):
    """``agent``, ``user``, ``type``, ``source``, ``archived``: ltm.store.selectors.filter_memories does the work.

    Filters narrow the caller's scoped queryset; they never widen it (``?user=`` of someone else on an
    end user's own items returns nothing).
    """

    agent = django_filters.CharFilter(method="_noop", max_length=255, help_text=_("Agent namespace, e.g. chat."))
    user = django_filters.CharFilter(method="_noop", max_length=255, help_text=_("A user: name, e-mail or platform user id."))
    type = django_filters.ChoiceFilter(
        method="_noop", choices=[(v, v) for v in MemoryType.values] + [(v.lower(), v) for v in MemoryType.values]
    )
    source = django_filters.ChoiceFilter(method="_noop", choices=Source.choices)
    archived = django_filters.BooleanFilter(method="_noop")

    def _noop(self, queryset, name, value):
        return queryset

    def filter_queryset(self, queryset):
        data = self.form.cleaned_data
        return filter_memories(
            queryset,
            agent=data.get("agent") or None,
            user=data.get("user") or None,
            memory_type=data.get("type") or None,
            source=data.get("source") or None,
            archived=data.get("archived"),
        )


class MemoryFilterBackend(DjangoFilterBackend):
    """django-filter's backend, skipped when the request carries no filter (the common case)."""

    def filter_queryset(self, request, queryset, view):
        if not any(name in request.query_params for name in MemoryFilterSet.base_filters):
            return queryset
        return super().filter_queryset(request, queryset, view)


def bounded_int(request, name: str, *, default: int, minimum: int, maximum: int) -> int:
    """An integer query parameter within bounds; a 400 naming the parameter otherwise."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValidationError({name: [f"Must be an integer, got {raw[:40]!r}."]}) from None
    if value < minimum or value > maximum:
        raise ValidationError({name: [f"Must be between {minimum} and {maximum}."]})
    return value


class CheapLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=&offset=`` without a ``COUNT(*)`` of the whole (possibly huge) table.

    One extra row is fetched to know whether there is a next page. Bad values are a 400 naming the
    parameter instead of being silently replaced by the default.
    """

    default_limit = 50
    max_limit = 200

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit = bounded_int(
            request, self.limit_query_param, default=self.default_limit, minimum=1, maximum=self.max_limit
        )
        self.offset = bounded_int(request, self.offset_query_param, default=0, minimum=0, maximum=MAX_OFFSET)
        rows = list(queryset[self.offset : self.offset + self.limit + 1])
        self.has_next = len(rows) > self.limit
        self.count = None
        return rows[: self.limit]

    def get_next_link(self):
        if not self.has_next:
            return None

        url = self.request.build_absolute_uri()
        url = replace_query_param(url, self.limit_query_param, self.limit)
        return replace_query_param(url, self.offset_query_param, self.offset + self.limit)

    def get_previous_link(self):
        if self.offset <= 0:
            return None
        return super().get_previous_link()

    def get_paginated_response(self, data):
        return Response(
            OrderedDict([("next", self.get_next_link()), ("previous", self.get_previous_link()), ("results", data)])
        )

    def get_schema_operation_parameters(self, view):
        """``limit`` and ``offset`` with the bounds :meth:`paginate_queryset` enforces (a 400 outside them)."""
        bounds = {self.limit_query_param: (1, self.max_limit), self.offset_query_param: (0, MAX_OFFSET)}
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            low, high = bounds.get(parameter["name"], (None, None))
            if low is not None:
                parameter["schema"] = {**parameter["schema"], "minimum": low, "maximum": high}
        return parameters

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["results"],
            "properties": {
                "next": {"type": "string", "nullable": True, "format": "uri"},
                "previous": {"type": "string", "nullable": True, "format": "uri"},
                "results": schema,
            },
        }
