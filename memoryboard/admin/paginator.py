"""A paginator for very large tables: it never counts the whole table."""

from __future__ import annotations

from django.contrib.admin.views.main import PAGE_VAR, ChangeList
from django.core.paginator import Paginator
from django.utils.functional import cached_property

# Pages counted ahead of the current one; the page links reach that far.
PAGES_AHEAD = 10
# Deeper than this many rows, paging stops (an OFFSET that deep reads as many rows): filter instead.
MAX_CAP = 100_000


class CappedCountPaginator(Paginator):
    """Counts at most ``cap`` rows: ``SELECT COUNT(*) FROM (SELECT pk … LIMIT cap+1)``.

    A full ``COUNT(*)`` of a million-row InnoDB table reads a whole index on every page, and a
    filtered one may read every row. A capped count reads at most ``cap + 1`` matching rows. Beyond
    the cap the changelist says "more than N" and links the pages up to the cap; the cap moves with
    the page shown (``for_page``), so paging on never hits a wall.
    """

    def __init__(self, object_list, per_page, *args, cap: int | None = None, **kwargs):
        super().__init__(object_list, per_page, *args, **kwargs)
        self.cap = cap or per_page * PAGES_AHEAD
        self.capped = False

    @classmethod
    def for_page(cls, object_list, per_page, page: str | int | None, **kwargs) -> CappedCountPaginator:
        """A paginator whose cap reaches ``PAGES_AHEAD`` pages past ``page`` (1-based)."""
        try:
            number = max(1, int(page or 1))
        except (TypeError, ValueError):
            number = 1
        return cls(object_list, per_page, cap=min(MAX_CAP, per_page * (number - 1 + PAGES_AHEAD)), **kwargs)

    @cached_property
    def count(self) -> int:
        qs = self.object_list
        if not hasattr(qs, "order_by"):
            return len(qs)
        n = qs.order_by().values("pk")[: self.cap + 1].count()
        self.capped = n > self.cap
        return min(n, self.cap)


class CappedChangeList(ChangeList):
    """A changelist that never offers "show all" over a capped (so unknown) count."""

    def get_results(self, request):
        super().get_results(request)
        if self.paginator.capped and self.can_show_all:
            self.can_show_all = False
            if self.show_all:  # the unbounded queryset is lazy: replace it before anything reads it
                self.show_all = False
                self.result_list = self.paginator.page(self.page_num).object_list


class CappedCountAdminMixin:
    """ModelAdmin settings for big tables: capped count, no full-count, a bounded "show all"."""

    paginator = CappedCountPaginator
    show_full_result_count = False
    # Below the smallest cap, so "show all" is only offered for an exact (uncapped) count.
    list_max_show_all = 200

    def get_changelist(self, request, **kwargs):
        return CappedChangeList

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        return CappedCountPaginator.for_page(
            queryset, per_page, request.GET.get(PAGE_VAR), orphans=orphans,
            allow_empty_first_page=allow_empty_first_page,
        )
