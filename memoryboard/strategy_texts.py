"""Strategy descriptions from the framework-free ``memoryboard.strategies`` registry, marked for translation.

The registry cannot import Django, so its English help texts are listed here for ``makemessages``; the playground
templates translate them at render time (``{% translate col.info.description %}``). Keep this list in sync with
``memoryboard/strategies/registry.py`` (``tests/i18n`` checks that every description has a translation).
"""

from django.utils.translation import gettext, gettext_noop, ngettext

from memoryboard.strategies.reasons import REASONS

STRATEGY_TEXTS = (
    gettext_noop('Keep the first N and the last M messages, drop the middle.'),
    gettext_noop('Messages kept from the start.'),
    gettext_noop('Messages kept from the end.'),
    gettext_noop('Above the threshold, replace all but the last messages by one LLM summary (degrades to the first 3 messages if the LLM fails).'),
    gettext_noop('Summarize above this many messages (LangChain SummarizationMiddleware: trigger messages).'),
    gettext_noop('Newest messages kept verbatim after the summary (LangChain: keep messages).'),
    gettext_noop('Also summarize above this many estimated tokens; 0 = off (LangChain: trigger tokens).'),
    gettext_noop('Also summarize above this share of the context window, 0 to 1; 0 = off (LangChain: trigger fraction).'),
    gettext_noop("The model's context window in tokens, for the share trigger."),
    gettext_noop('The instruction given to the summarizer; empty = the default one (LangChain: summary_prompt).'),
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
    gettext_noop('Clear only when the estimated tokens exceed this (Anthropic clear_tool_uses: trigger).'),
    gettext_noop('Newest tool results left untouched (Anthropic: keep).'),
    gettext_noop('Tools whose results are never cleared (Anthropic: exclude_tools).'),
    gettext_noop('Clear only if that frees at least this many tokens, else nothing (Anthropic: clear_at_least).'),
    gettext_noop('Also clear the arguments of the cleared calls (Anthropic: clear_tool_inputs).'),
    gettext_noop('Summarize when any trigger that is set holds, or only when all of them do.'),
    gettext_noop('The text that replaces a cleared result.'),
    gettext_noop('Results in the last N user turns are never cleared (OpenAI Agents SDK ToolOutputTrimmer: recent_turns).'),
    gettext_noop('Clear only results longer than this many characters; 0 = any (ToolOutputTrimmer: max_output_chars).'),
    gettext_noop('A cleared result keeps its first N characters before the placeholder (ToolOutputTrimmer: preview_chars).'),
    gettext_noop('Also remove the thinking blocks of older assistant turns (Anthropic: clear_thinking).'),
    gettext_noop('Newest assistant turns whose thinking blocks stay (Anthropic: keep thinking_turns).'),
)


# Why a message was dropped, summarized or cleared: memoryboard.strategies.reasons.REASONS, for makemessages.
REASON_TEXTS = (
    gettext_noop("the summarizer failed: only the first messages were kept"),
    gettext_noop("outside keep_first / keep_last"),
    gettext_noop("over the token budget (the newest messages that fit were kept)"),
    gettext_noop("folded into the summary (above the trigger)"),
    gettext_noop("an old tool result, cleared (only the newest ones are kept)"),
    gettext_noop("the arguments of a cleared call"),
    gettext_noop("older thinking blocks, cleared (only the newest turns keep theirs)"),
    gettext_noop("dropped with its tool call or its results (they go together)"),
)


def reason_label(code: str) -> str:
    """The translated text of a reason code of :data:`memoryboard.strategies.reasons.REASONS`."""
    return gettext(REASONS[code]) if code in REASONS else code


def fallback_text(reason) -> str:
    """A strategy's fallback (:class:`memoryboard.strategies.Fallback`) in the reader's language; ``""``
    for none. The summarizer's own error message is quoted as it came."""
    if reason is None:
        return ""
    if reason.failure == "empty":
        failure = gettext("it returned an empty summary")
    elif reason.failure == "not_text":
        failure = gettext("it returned %(type)s instead of text") % {"type": reason.detail}
    else:
        failure = reason.detail
    if reason.code == "nothing_deleted":
        return gettext("the summarizer failed (%(failure)s), so nothing is deleted") % {"failure": failure}
    return ngettext("the summarizer failed (%(failure)s), so only the first message was kept",
                    "the summarizer failed (%(failure)s), so only the first %(n)s messages were kept",
                    reason.kept) % {"failure": failure, "n": reason.kept}
