"""Strategy descriptions from the framework-free ``memoryboard.strategies`` registry, marked for translation.

The registry cannot import Django, so its English help texts are listed here for ``makemessages``; the playground
templates translate them at render time (``{% translate col.info.description %}``). Keep this list in sync with
``memoryboard/strategies/registry.py`` (``tests/i18n`` checks that every description has a translation).
"""

from django.utils.translation import gettext_noop

STRATEGY_TEXTS = (
    gettext_noop('Keep the first N and the last M messages, drop the middle.'),
    gettext_noop('Messages kept from the start.'),
    gettext_noop('Messages kept from the end.'),
    gettext_noop('Above the threshold, replace all but the last messages by one LLM summary (degrades to the first 3 messages if the LLM fails).'),
    gettext_noop('Summarize only above this many messages.'),
    gettext_noop('Newest messages kept verbatim after the summary.'),
    gettext_noop('Keep the newest messages that fit in a token budget.'),
    gettext_noop('Token budget, filled from the newest message backwards.'),
    gettext_noop('Run strategies in sequence, each on the previous output (default: summarize, then sliding window).'),
    gettext_noop('Strategies to run, in order.'),
    gettext_noop('Delete the stored rows between the first N and the last M.'),
    gettext_noop("Replace all but the last rows by one stored summary of the user's preferences, habits and facts (nothing is deleted if the LLM fails)."),
    gettext_noop('Keep only the newest N rows, delete the rest.'),
    gettext_noop('Newest rows kept.'),
    gettext_noop('Delete the rows that do not match the rules.'),
    gettext_noop('Roles whose messages are kept.'),
    gettext_noop('An assistant message containing one of these is kept.'),
    gettext_noop('Keep tool messages.'),
    gettext_noop('Messages shorter than this (stripped) are deleted.'),
    gettext_noop('Above the trigger, replace the content of the oldest tool results by a placeholder (calls, ids and order stay).'),
    gettext_noop('Clear only when the estimated tokens exceed this.'),
    gettext_noop('Newest tool results left untouched.'),
    gettext_noop('Tools whose results are never cleared.'),
)
