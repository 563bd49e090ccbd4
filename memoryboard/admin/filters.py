"""List filters of the admin.

Agent, user, type and source live in the namespace text and in ``value_json``, not in columns, so
they are SimpleListFilters that call the shared ``ltm.selectors.filter_memories``.
"""

from __future__ import annotations

from django.contrib import admin
from django.core.cache import cache
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext_lazy as _

from memoryboard.ltm.config import get_agents_config
from memoryboard.ltm.namespaces import agent_prefix, build_namespace, parse_namespace
from memoryboard.ltm.selectors import filter_memories
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryFlag, MemoryState, MemoryType, Source


def paused_exists() -> Exists:
    """True for items with a pause flag (a correlated primary-key lookup, one per row read)."""
    return Exists(MemoryFlag.objects.filter(memory_id=OuterRef("pk"), paused=True))


def configured_agent_namespaces() -> list[tuple[str, str]]:
    """``(namespace, label)`` of every agent in agents.yaml that keeps long-term memory."""
    seen: dict[str, str] = {}
    for agent_id, cfg in get_agents_config().agents.items():
        ns = cfg.long_term_memory.namespace
        label = ns if ns == agent_id else f"{ns} ({agent_id})"
        seen.setdefault(ns, label)
    return sorted(seen.items())


AGENTS_CACHE_KEY = "memoryboard:admin:stored-agent-namespaces"
AGENTS_CACHE_SECONDS = 300
MAX_STORED_AGENTS = 100


def stored_agent_namespaces() -> list[str]:
    """The distinct agent namespaces in the memory table, found by index seeks (cached 5 minutes).

    A ``DISTINCT`` reads the whole namespace index (a million entries); this is a loose index scan
    instead: one ``ORDER BY namespace LIMIT 1`` seek per agent, each starting past every namespace of
    the agent before (``["agent:x","user`` followed by a letter sorts after ``["agent:x","user:…``
    in binary and in Unicode collations alike).
    """
    cached = cache.get(AGENTS_CACHE_KEY)
    if cached is not None:
        return cached
    found: list[str] = []
    bound = ""
    for _ in range(MAX_STORED_AGENTS):
        text = (
            LongTermMemory.objects.filter(namespace__gt=bound).order_by("namespace")
            .values_list("namespace", flat=True).first()
        )
        if text is None:
            break
        ns = parse_namespace(text)
        if ns is None:  # not a memories namespace: step past this one value
            bound = text
            continue
        found.append(ns.agent)
        bound = agent_prefix(ns.agent) + '"userz'
    cache.set(AGENTS_CACHE_KEY, found, AGENTS_CACHE_SECONDS)
    return found


def known_agent_namespaces() -> list[tuple[str, str]]:
    """``(namespace, label)`` of the configured agents and of every agent found in the table."""
    choices = dict(configured_agent_namespaces())
    for ns in stored_agent_namespaces():
        choices.setdefault(ns, ns)
    return sorted(choices.items())


class InputFilter(admin.SimpleListFilter):
    """A free-text filter (a small GET form that keeps the other filters)."""

    template = "admin/memoryboard/input_filter.html"

    def lookups(self, request, model_admin):
        return ()

    def has_output(self) -> bool:
        return True

    def choices(self, changelist):
        hidden = [
            (key, value)
            for key, values in changelist.params.items()
            if key not in (self.parameter_name, "p")
            for value in (values if isinstance(values, list) else [values])
        ]
        yield {
            "parameter": self.parameter_name,
            "value": self.value() or "",
            "hidden": hidden,
            "clear_url": changelist.get_query_string(remove=[self.parameter_name]),
        }


class AgentFilter(admin.SimpleListFilter):
    """By agent namespace: an indexed prefix match on the namespace.

    The choices are the agents of agents.yaml and those found in the table by index seeks; any other
    value works by URL (``?agent=name``) and then shows up as a choice.
    """

    title = _("agent")
    parameter_name = "agent"

    def lookups(self, request, model_admin):
        choices = known_agent_namespaces()
        current = self.value()
        if current and current not in dict(choices):
            choices.append((current, current))
        return choices

    def queryset(self, request, queryset):
        agent = self.value()
        if not agent:
            return queryset
        # MySQL's case-sensitive LIKE BINARY cannot use the namespace index; the plain (case-insensitive)
        # prefix LIKE can, and the exact match then only checks the rows of that range.
        return filter_memories(queryset.filter(namespace__istartswith=agent_prefix(agent)), agent=agent)


class UserFilter(InputFilter):
    """By platform user id: an exact (indexed) match on the user's namespace under each known agent.

    A suffix match (``LIKE '%,"user:42","memories"]'``) reads the whole namespace index, seconds at
    a million rows. Known agents: those of agents.yaml and of the table (``known_agent_namespaces``),
    or only the one chosen in the agent filter.
    """

    title = _("user")
    parameter_name = "user"

    def queryset(self, request, queryset):
        user = (self.value() or "").strip()
        if not user:
            return queryset
        agent = (request.GET.get(AgentFilter.parameter_name) or "").strip()
        agents = [agent] if agent else [ns for ns, _label in known_agent_namespaces()]
        return queryset.filter(
            namespace__in=[build_namespace(agent_namespace=a, user_id=user).as_text() for a in agents]
        )


class _ChoicesFilter(admin.SimpleListFilter):
    """A filter over a fixed set of choices, applied by ``filter_memories(**{selector_arg: value})``."""

    choices_enum: type = MemoryType
    selector_arg = ""

    def lookups(self, request, model_admin):
        return self.choices_enum.choices

    def queryset(self, request, queryset):
        return filter_memories(queryset, **{self.selector_arg: self.value()}) if self.value() else queryset


class TypeFilter(_ChoicesFilter):
    title = _("type")
    parameter_name = "type"
    choices_enum = MemoryType
    selector_arg = "memory_type"


class SourceFilter(_ChoicesFilter):
    title = _("source")
    parameter_name = "source"
    choices_enum = Source
    selector_arg = "source"


class StateFilter(admin.SimpleListFilter):
    """Active, paused, archived (by decay, limit or staff) or deleted by the user."""

    title = _("state")
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [c for c in MemoryState.choices if c[0] != MemoryState.PURGED]

    def queryset(self, request, queryset):
        value = self.value()
        if value == MemoryState.ACTIVE:
            return queryset.filter(archived=False).exclude(paused_exists())
        if value == MemoryState.PAUSED:
            # Driven from the (small) flag table, not a per-row check over the whole memory table.
            flagged = MemoryFlag.objects.filter(paused=True).values("memory_id")
            return queryset.filter(pk__in=flagged, archived=False)
        if value == MemoryState.ARCHIVED:
            return queryset.filter(archived=True).exclude(archived_reason=ArchivedReason.USER_DELETED)
        if value == MemoryState.DELETED:
            return queryset.filter(archived=True, archived_reason=ArchivedReason.USER_DELETED)
        return queryset


class ConversationFilter(InputFilter):
    title = _("conversation")
    parameter_name = "conversation_id"

    def queryset(self, request, queryset):
        value = (self.value() or "").strip()
        return queryset.filter(conversation_id=value) if value else queryset
