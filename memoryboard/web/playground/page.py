"""The strategy playground's page: every context strategy side by side, memory strategies as dry-run plans,
the context window.

Numbers come from the strategies' own result objects (:class:`ContextResult`, :class:`MemoryPlan`) via
:mod:`memoryboard.conversations`, exactly as the API renders them; nothing is recomputed here.

The whole configuration is in the URL (a GET form; htmx pushes the URL on every change): the source
(``conversation=`` a stored conversation, or ``trace=`` pasted messages kept as a :class:`PlaygroundTrace`),
the mode (``mode=budget`` sets every strategy to meet ``budget=`` tokens and ranks them), each strategy's
parameters (``c-trim-keep_last=``, ``m-filter-keep_roles=``) and the context window's ``agent=``. A reload
keeps the view; a link shares it. Messages are numbered for people from #1 (the first message) in every
column, plan and the context window; ``data-index`` and the data attributes keep the input position from 0,
as the API's ``kept``/``dropped`` lists do.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from memoryboard import conversations, users
from memoryboard.roles import is_developer
from memoryboard.strategies import CONTEXT_STRATEGIES, MEMORY_STRATEGIES, total_tokens
from memoryboard.web.forms import MessagesInputForm
from memoryboard.web.playground.columns import budget_columns, column_context, column_strategies, read_budget
from memoryboard.web.playground.context_window import window_context
from memoryboard.web.playground.plans import plan_context
from memoryboard.web.playground.rows import input_rows, segments
from memoryboard.web.playground.source import (
    Source,
    bound_form,
    conversation_choices,
    conversation_label,
    keep_system_prompt,
    playground_access,
    push_url,
    source_of,
    trace_store,
)


def _page(request, *, source: Source | None, input_form: MessagesInputForm | None = None, status: int = 200):
    listed = conversations.conversation_list(queryset=conversations.message_queryset_for(request.user))
    names = users.people(c.user_id for c in listed)
    show_ids = is_developer(request.user)
    ctx: dict[str, Any] = {
        "conversations": conversation_choices(listed, names, show_ids=show_ids),
        "show_ids": show_ids,
        "input_form": input_form or MessagesInputForm(),
        "source": source,
        "columns": [],
        "plans": [],
        "window": None,
    }
    if source is not None:
        if source.conversation_id:
            ctx["source_label"] = next((label for c, label in ctx["conversations"]
                                        if c.conversation_id == source.conversation_id), None) \
                or conversation_label(request, source.conversation_id, show_ids=show_ids)  # beyond the list
        messages = source.messages
        tokens_before = total_tokens(messages)
        mode = "budget" if request.GET.get("mode") == "budget" else "own"
        budget, budget_error = read_budget(request, tokens_before)
        if mode == "budget":
            columns, summary = budget_columns(request, messages, budget)
        else:
            columns, summary = [column_context(name, messages, bound_form(request, "context", name),
                                               keep_system=keep_system_prompt(request),
                                               cache_conversation=source.conversation_id or None)
                                for name in CONTEXT_STRATEGIES], []
        ctx.update(
            keep_system=keep_system_prompt(request),
            mode=mode, budget=budget, budget_error=budget_error, summary=summary, columns=columns,
            tokens_before=tokens_before, message_count=source.message_count, system_prompt=source.system_prompt,
            before=segments(input_rows(messages)),
            push_url=push_url(request),
        )
        if source.conversation_id:
            ctx["plans"] = [plan_context(request, name, source.conversation_id, bound_form(request, "memory", name),
                                         messages=messages)
                            for name in MEMORY_STRATEGIES]
            ctx["window"] = window_context(request, source.conversation_id, messages,
                                           strategies=column_strategies(columns))
    return render(request, "web/playground.html", ctx, status=status)


@playground_access
@require_http_methods(["GET", "POST"])
def playground(request):
    """GET: the playground for the configuration in the query string. POST: pasted or uploaded JSON
    messages, kept as a trace; the answer redirects to the trace's URL (a reload keeps it, a link shares it)."""
    if request.method == "POST":
        form = MessagesInputForm(request.POST, request.FILES)
        if not form.is_valid():
            return _page(request, source=None, input_form=form, status=400)
        trace = trace_store(messages=form.cleaned_data["messages"], actor=request.user)
        return redirect(reverse("playground") + "?" + urlencode({"trace": trace.pk}))
    return _page(request, source=source_of(request))
