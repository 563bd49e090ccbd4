"""The admin's search by meaning: the one search (``ltm.search.retrieval.memory_rank``) over the items the staff
member may see, one user's or everyone's, each result with the parts of its score.

The changelist's own search stays a text search (substring or id, paginated and counted); ranking by
meaning is this separate page, linked from the changelist (docs/retrieval.md § Explanations).
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils.translation import gettext, gettext_lazy as _

from memoryboard.llm.errors import LLMError
from memoryboard.ltm.search.retrieval import DEFAULT_K, MAX_K, MAX_QUERY_CHARS, memory_rank
from memoryboard.ltm.store.selectors import memory_queryset_for, user_term_q
from memoryboard.models.retrieval import INDEX_LABELS, OUTCOME_LABELS
from memoryboard.users import attach_people


class MeaningSearchForm(forms.Form):
    q = forms.CharField(label=_("Search by meaning"), max_length=MAX_QUERY_CHARS, strip=True,
                        widget=forms.TextInput(attrs={"size": 60, "autofocus": True}))
    user = forms.CharField(label=_("user"), required=False, max_length=200, strip=True,
                           help_text=_("Name, e-mail or user id; empty searches every user's items."))
    k = forms.IntegerField(label=_("results"), min_value=1, max_value=MAX_K, initial=DEFAULT_K, required=False)


def meaning_search_view(model_admin, request):
    """GET ``q`` (and ``user``, ``k``): the results best first, with their score parts and how many
    candidates were left out and why."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    form = MeaningSearchForm(request.GET or None)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": gettext("Search by meaning"),
        "opts": model_admin.model._meta,
        "form": form,
        "ranking": None,
        "results": [],
        "left_out": [],
        "error": "",
    }
    status = 200
    if request.GET and not form.is_valid():
        status = 400
    elif form.is_bound:
        data = form.cleaned_data
        queryset = memory_queryset_for(request.user)
        if data["user"]:
            queryset = queryset.filter(user_term_q(data["user"]))
        try:
            # Staff see across users: every user's pause rules apply (user_id=None), as in the API.
            found = memory_rank(queryset=queryset, query=data["q"], k=data["k"] or DEFAULT_K)
        except LLMError as exc:
            context["error"] = gettext("The embedding model failed: %(reason)s") % {"reason": exc}
            status = 502
        else:
            results = attach_people([hit.memory for hit in found.results])
            for memory, hit in zip(results, found.results, strict=True):
                memory.parts = hit.parts
            summary = found.summary()
            context.update(
                ranking=found,
                results=results,
                considered=sum(summary.values()),
                index_label=INDEX_LABELS.get(found.index, found.index),
                left_out=[(OUTCOME_LABELS.get(outcome, outcome), n) for outcome, n in sorted(summary.items())
                          if outcome != "returned"],
            )
    return TemplateResponse(request, "admin/memoryboard/longtermmemory/meaning_search.html", context, status=status)
