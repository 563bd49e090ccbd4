"""What the playground runs on and how it is configured: a stored conversation or a pasted trace, each
strategy's form bound to the query string, the page's URL; who may use it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from memoryboard import conversations, users
from memoryboard.agents_config import agent_labels
from memoryboard.ltm.people.user_data import conversation_openings
from memoryboard.models import PlaygroundTrace
from memoryboard.playground_traces import trace_gone_because, trace_touch
from memoryboard.roles import is_developer, is_support
from memoryboard.strategies import Message, StrategyError, normalize_name, to_messages
from memoryboard.strategies.formats import detect_format
from memoryboard.web.errors import NotFoundSaying
from memoryboard.web.forms import StrategyParamsForm


def playground_access(view):
    """Developers, support staff and superusers; end users get 403."""

    @wraps(view)
    @login_required
    def wrapper(request, *args, **kwargs):
        if not (is_developer(request.user) or is_support(request.user)):
            raise PermissionDenied(_("The playground is for developers and support staff."))
        return view(request, *args, **kwargs)

    return wrapper


@dataclass
class Source:
    """What the strategies run on: a stored conversation's rows or a pasted trace's messages."""

    messages: tuple[Message, ...]
    conversation_id: str = ""
    trace_id: str = ""
    # The first message is an Anthropic request's top-level ``system``, not one of its messages.
    system_prompt: bool = False

    @property
    def message_count(self) -> int:
        """What the pages call the input's messages (``conversations``: one count): a stored conversation's
        rows; a trace's messages as pasted, its top-level system prompt named beside the count."""
        return len(self.messages) - self.system_prompt


def top_level_system(items: Sequence[Any]) -> bool:
    """Whether a trace's first message is the top-level ``system`` of a pasted Anthropic request
    (``parse_messages_json`` puts it first): Anthropic's messages have no system role of their own. A
    trace of plain text reads the same in both formats and is counted as OpenAI messages."""
    return bool(items) and isinstance(items[0], dict) and items[0].get("role") == "system" and len(items) > 1 \
        and detect_format(items[1:]) == "anthropic"


def conversation_rows(request, conversation_id: str) -> list:
    try:
        return conversations.conversation_messages(
            conversation_id, queryset=conversations.message_queryset_for(request.user)
        )
    except conversations.ConversationNotFound:
        raise Http404(_("No such conversation.")) from None


def source_of(request) -> Source | None:
    """The source named in the query string (404 if unknown or not visible), or ``None`` if none."""
    conversation_id = request.GET.get("conversation", "").strip()
    if conversation_id:
        return Source(to_messages(conversation_rows(request, conversation_id)), conversation_id=conversation_id)
    trace_id = request.GET.get("trace", "").strip()
    if trace_id:
        trace = PlaygroundTrace.objects.filter(pk=trace_id[:64]).first()
        if trace is None:
            gone = trace_gone_because(trace_id[:64])
            if gone is not None:
                raise NotFoundSaying(_("This trace was removed on %(when)s by a privacy erase of the person whose "
                                "conversation or items it held; paste the messages again to use them.")
                              % {"when": date_format(timezone.localtime(gone[1]), "SHORT_DATETIME_FORMAT")})
            raise Http404(_("No such trace: paste the messages again."))
        trace_touch(trace)
        return Source(to_messages(trace.messages), trace_id=trace.pk,
                      system_prompt=top_level_system(trace.messages))
    return None


def trace_store(*, messages: list, actor) -> PlaygroundTrace:
    """Keep pasted messages under their digest (the same messages give the same link)."""
    trace, created = PlaygroundTrace.objects.get_or_create(
        pk=PlaygroundTrace.digest(messages), defaults={"messages": messages, "created_by": actor}
    )
    if not created:
        trace_touch(trace)
    return trace


def bound_form(request, kind: str, name: str) -> StrategyParamsForm:
    """The strategy's form, bound to the query string when it carries any of its fields (else defaults)."""
    prefix = f"{kind[0]}-{name.lower()}-"
    data = request.GET if any(key.startswith(prefix) for key in request.GET) else None
    return StrategyParamsForm(data, kind=kind, strategy=name)


def keep_system_prompt(request) -> bool:
    """The visible "keep the system prompt" choice (``?keep_system=``), on by default as in the agent runtime.

    The page sends a hidden ``0`` before the checkbox's ``1``, so the last value is the choice."""
    values = request.GET.getlist("keep_system")
    return not values or values[-1] == "1"


def push_url(request) -> str:
    """The page's URL for the current configuration (what a reload or a shared link shows)."""
    query = request.GET.copy()
    query.pop("page", None)
    query.pop("all", None)
    return reverse("playground") + ("?" + query.urlencode() if query else "")


def strategy_or_404(name: str, kind: str) -> str:
    try:
        return normalize_name(name, kind)
    except StrategyError:
        raise Http404(_("Unknown strategy.")) from None


def with_push_url(request, response: HttpResponse) -> HttpResponse:
    response["HX-Push-Url"] = push_url(request)
    return response


def conversation_choices(listed, names, *, show_ids: bool) -> list[tuple[Any, str]]:
    """Each stored conversation with what the page calls it: for developers its id and agent id; for
    support staff in words (the agent's name, whose it is, its first question), never an id."""
    if show_ids:
        return [(c, " · ".join([c.conversation_id, c.agent_id, _("user %(name)s") % {
            "name": names[c.user_id].label if c.user_id else ""}])) for c in listed]

    labels = agent_labels()
    openings = conversation_openings([c.conversation_id for c in listed])
    choices = []
    for c in listed:
        parts = [labels.get(c.agent_id, _("an agent")),
                 _("user %(name)s") % {"name": names[c.user_id].label if c.user_id else _("unknown")}]
        opening = " ".join(openings.get(c.conversation_id, "").split())
        if opening:
            parts.append("“%s”" % (opening if len(opening) <= 48 else opening[:47] + "…"))
        if c.started_at:
            parts.append(date_format(timezone.localtime(c.started_at), "SHORT_DATE_FORMAT"))
        choices.append((c, " · ".join(parts)))
    return choices


def conversation_label(request, conversation_id: str, *, show_ids: bool) -> str:
    """What the pages call one stored conversation (:func:`conversation_choices`)."""
    listed = conversations.conversation_list(queryset=conversations.message_queryset_for(request.user)
                                             .filter(conversation_id=conversation_id))
    return "".join(label for _c, label in conversation_choices(
        listed, users.people(c.user_id for c in listed), show_ids=show_ids))
