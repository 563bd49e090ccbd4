"""List filters of the admin.

Agent, user, type and source live in the namespace text and in ``value_json``, not in columns, so
they are SimpleListFilters that call the shared ``ltm.store.selectors.filter_memories``.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Exists, OuterRef
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from memoryboard.agents_config import agent_labels, get_agents_config
from memoryboard.ltm.store.selectors import exact_text_q, filter_memories, known_agent_namespaces, user_term_q
from memoryboard.ltm.store.states import current_q, state_q
from memoryboard.models import ArchivedReason, LongTermMemory, MemoryFlag, MemoryState, MemoryType, Source
from memoryboard.users import user_ids_matching


def paused_exists() -> Exists:
    """True for items with a pause flag (a correlated primary-key lookup, one per row read)."""
    return Exists(MemoryFlag.objects.filter(memory_id=OuterRef("pk"), paused=True))


class InputFilter(admin.SimpleListFilter):
    """A free-text filter (a small GET form that keeps the other filters)."""

    template = "admin/memoryboard/input_filter.html"
    placeholder = ""

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
            "placeholder": self.placeholder,
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
        labels = agent_labels()  # by agent id and by namespace: the agents' display names
        return [(value, labels.get(value, label)) for value, label in choices]

    def queryset(self, request, queryset):
        agent = self.value()
        if not agent:
            return queryset
        return filter_memories(queryset, agent=agent)  # selectors.agent_q: indexed prefix, exact re-check


class ChatAgentFilter(admin.SimpleListFilter):
    """Chat messages of one agent (the agents of agents.yaml, by their display names)."""

    title = _("agent")
    parameter_name = "agent_id"

    def lookups(self, request, model_admin):
        labels = agent_labels()
        agents = sorted(get_agents_config().agents)
        if self.value() and self.value() not in agents:
            agents.append(self.value())
        return [(agent, labels.get(agent, agent)) for agent in agents]

    def queryset(self, request, queryset):
        return queryset.filter(agent_id=self.value()) if self.value() else queryset


class UserFilter(InputFilter):
    """By name, e-mail or platform user id (``users.user_ids_matching``): an exact (indexed) match on
    each matching user's namespace under each known agent.

    A suffix match (``LIKE '%,"user:42","memories"]'``) reads the whole namespace index, seconds at
    a million rows. Known agents: those of agents.yaml and of the table (``known_agent_namespaces``),
    or only the one chosen in the agent filter.
    """

    title = _("user")
    parameter_name = "user"
    placeholder = _("Name, e-mail or user id")

    def queryset(self, request, queryset):
        user = (self.value() or "").strip()
        if not user:
            return queryset
        agent = (request.GET.get(AgentFilter.parameter_name) or "").strip()
        return queryset.filter(user_term_q(user, agents=[agent] if agent else None))


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
    """The one state filter: active, paused, archived (any reason, or decayed / over the limit / by staff),
    deleted by the user, and the states of their own (superseded, expired, waiting for review, rejected),
    by the rule the support desk counts with (``web.person_items.state_q``)."""

    title = _("state")
    parameter_name = "state"
    REASONS = (ArchivedReason.DECAY, ArchivedReason.OVER_LIMIT, ArchivedReason.STAFF)

    def lookups(self, request, model_admin):
        out = []
        for value, label in MemoryState.choices:
            if value == MemoryState.PURGED:
                continue
            out.append((value, label))
            if value == MemoryState.ARCHIVED:
                out += [(f"archived:{r.value}", format_lazy("{} · {}", label, r.label)) for r in self.REASONS]
        return out

    def queryset(self, request, queryset):
        value = self.value() or ""
        if value.startswith("archived:"):
            reason = value.partition(":")[2]
            return queryset.filter(archived=True, archived_reason=reason) if reason in ArchivedReason.values \
                else queryset.none()
        if value == MemoryState.ACTIVE:
            return queryset.filter(current_q()).exclude(paused_exists())
        if value == MemoryState.PAUSED:
            # Driven from the (small) flag table, not a per-row check over the whole memory table.
            flagged = MemoryFlag.objects.filter(paused=True).values("memory_id")
            return queryset.filter(current_q(), pk__in=flagged)
        if value in MemoryState.values:
            return queryset.filter(state_q(value))
        return queryset


class SubjectUserFilter(InputFilter):
    """Audit entries about a user (name, e-mail or id): of their items (purged ones too), of the user."""

    title = _("subject user")
    parameter_name = "subject_user"
    placeholder = _("Name, e-mail or user id")

    def queryset(self, request, queryset):
        term = (self.value() or "").strip()
        if not term:
            return queryset
        return queryset.filter(exact_text_q("subject_user_id", user_ids_matching(term)))


class SubjectAgentFilter(AgentFilter):
    """Audit entries of the items of one agent."""

    parameter_name = "subject_agent"

    def queryset(self, request, queryset):
        agent = self.value()
        if not agent:
            return queryset
        items = filter_memories(LongTermMemory.objects.all(), agent=agent).values("pk")
        return queryset.filter(object_type="memory", object_id__in=items)


class ChatUserFilter(InputFilter):
    """Chat messages of a user (name, e-mail or id)."""

    title = _("user")
    parameter_name = "user"
    placeholder = _("Name, e-mail or user id")

    def queryset(self, request, queryset):
        term = (self.value() or "").strip()
        return queryset.filter(user_id__in=user_ids_matching(term)) if term else queryset


class ConversationFilter(InputFilter):
    title = _("conversation")
    parameter_name = "conversation_id"

    def queryset(self, request, queryset):
        value = (self.value() or "").strip()
        return queryset.filter(conversation_id=value) if value else queryset
