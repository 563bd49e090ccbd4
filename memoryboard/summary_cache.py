"""The summary cache of stored conversations: :class:`~memoryboard.strategies.summary_cache.SummaryCache`
on the ``memoryboard_summary_cache`` table, one conversation per instance."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import IntegrityError, transaction

from memoryboard.models import SummaryCacheEntry
from memoryboard.strategies.summary_cache import prompt_hash

# A conversation's cached summaries read at once: one per `threshold` messages, so a few hundred at most.
MAX_ENTRIES = 1000


class ConversationSummaryCache:
    """Summaries of conversation ``conversation_id``; reads one query, writes one row."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id

    def entries(self, *, model: str, prompt: str) -> Mapping[str, tuple[int, str]]:
        rows = (
            SummaryCacheEntry.objects.filter(
                conversation_id=self.conversation_id, model=model[:255], prompt_hash=prompt_hash(prompt)
            )
            .order_by("-message_count")
            .values_list("prefix_hash", "message_count", "summary")[:MAX_ENTRIES]
        )
        return {h: (count, summary) for h, count, summary in rows}

    def store(self, *, model: str, prompt: str, prefix_hash: str, count: int, summary: str) -> None:
        try:
            with transaction.atomic():  # a savepoint: a concurrent turn storing the same key is no error
                SummaryCacheEntry.objects.create(
                    conversation_id=self.conversation_id, model=model[:255], prompt_hash=prompt_hash(prompt),
                    prefix_hash=prefix_hash, message_count=count, summary=summary,
                )
        except IntegrityError:
            pass
