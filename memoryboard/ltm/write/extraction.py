"""Write channel A: automatic extraction after a turn, behind ``should_skip_extraction()``.

The filter is cheap and runs on the request thread; the extraction (one LLM call) runs in a task.
Extracted items are saved with ``source="auto_extract"`` through the reconcile step (``ltm.write.reconcile``):
a repeat reinforces the item already stored, an update supersedes it.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timezone as dt_timezone
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memoryboard.agents_config import get_agents_config
from memoryboard.llm.clauses import Clause, split_clauses
from memoryboard.llm.cues import find_secrets, is_question, is_small_talk
from memoryboard.llm.errors import LLMError
from memoryboard.llm.extraction import extraction_report, hard_skip, sentence_context
from memoryboard.llm.factory import get_extractor
from memoryboard.ltm.store.erase_gate import UserDataErased
from memoryboard.ltm.store.items import MemoryError, normalize_content
from memoryboard.ltm.store.lifecycle import memory_enforce_limit
from memoryboard.ltm.store.locks import NamespaceLockTimeout
from memoryboard.ltm.store.selectors import namespace_q
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.write.reconcile import iso, memory_save_many_reconciled
from memoryboard.ltm.write.review import review_required
from memoryboard.ltm.write.tools import memory_saving_enabled
from memoryboard.models import LongTermMemory, Source, VersionEvent
from memoryboard.models.labels import EXTRACTED
from memoryboard.models.namespaces import build_namespace

logger = logging.getLogger(__name__)

# Letters and digits that count towards the length; a CJK character carries about a word's meaning.
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORDCHAR = re.compile(r"[^\W_]")
# "I'm 34" (4), 领证啦 (6) are statements; "ok", "hi", "好" (2) are not.
MIN_MEANINGFUL_LENGTH = 4

SKIP_DISABLED_AGENT = "extraction is disabled for this agent"
SKIP_USER_SWITCH = "the user turned off saving new memories"
SKIP_TOO_SHORT = "too short"
SKIP_SMALL_TALK = "small talk"
SKIP_NO_STATEMENT = "nothing to remember: only questions, greetings, hypotheticals or secrets"
SKIP_ALREADY_KNOWN = "nothing new: already remembered"


def meaningful_length(text: str) -> int:
    """Letters and digits, each CJK character counting two."""
    return len(_WORDCHAR.findall(text)) + len(_CJK.findall(text))


def _role(message: Any) -> str:
    value = message.get("role") if isinstance(message, dict) else getattr(message, "role", "")
    return str(value or "").lower()


def _content(message: Any) -> str:
    value = message.get("content") if isinstance(message, dict) else getattr(message, "content", "")
    return str(value or "")


def _answers_a_question(conversation: list) -> bool:
    """Whether the assistant's last message asked something: a bare answer ("Bob") may then be a fact."""
    for message in reversed(conversation):
        if _role(message) == "assistant":
            return _content(message).rstrip().endswith(("?", "？", "吗"))
    return False


def _known_contents(agent_config, user_id: str) -> list[str]:
    ns = build_namespace(agent_namespace=agent_config.long_term_memory.namespace, user_id=str(user_id))
    values = LongTermMemory.objects.filter(namespace_q(ns), archived=False).values_list(
        "value_json", flat=True
    )
    return [normalize_content((v or {}).get("content", "")) for v in values]


def should_skip_extraction(
    *, user_message: str, conversation: list[dict], agent_config, user_id, saving_enabled: bool | None = None
) -> str | None:
    """Decide cheaply whether a turn is worth an extraction call.

    Layers, in order: extraction disabled for the agent; the user's "save new memories" switch off;
    :func:`text_skip_reason` (too short; greetings and small talk, Chinese and English; nothing that may
    state something); nothing new (every clause that may state something already remembered). A short
    real statement ("我今年三十五岁。", "I'm 34") passes: whether it is worth keeping is the extractor's call.

    Args:
        user_message: the user's message of this turn.
        conversation: the messages of the conversation up to this turn (dicts or rows).
        agent_config: the agent's :class:`~memoryboard.agents_config.AgentConfig`.
        user_id: the platform user id.
        saving_enabled: the user's "save new memories" switch when the caller has read it; ``None`` reads it.

    Returns:
        The reason to skip, or None to extract.
    """
    ltm = agent_config.long_term_memory
    if not (ltm.enabled and ltm.auto_extract):
        return SKIP_DISABLED_AGENT
    if not (memory_saving_enabled(str(user_id)) if saving_enabled is None else saving_enabled):
        return SKIP_USER_SWITCH
    reason = text_skip_reason(user_message, conversation)
    if reason:
        return reason
    statements = [normalize_content(c.text) for c in candidate_clauses(user_message)]
    known = [k for k in _known_contents(agent_config, str(user_id)) if k]
    if known and statements and all(any(s in k or k in s for k in known) for s in statements):
        return SKIP_ALREADY_KNOWN
    return None


def withheld_words(kinds) -> str:
    """What a turn's outcome and its audit say of the secrets not stored: "not stored: a password and a
    card number" ("" when none)."""
    kinds = list(kinds)
    if not kinds:
        return ""
    named = [f"an {kind}" if kind[0] in "AEIOU" else f"a {kind}" for kind in kinds]
    return "not stored: " + (named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1])


def secrets_withheld(user_message: str) -> str:
    """:func:`withheld_words` for the secrets in ``user_message`` (``llm.cues.find_secrets``)."""
    return withheld_words(find_secrets(user_message or ""))


def candidate_clauses(text: str) -> list[Clause]:
    """The clauses of a message that may state something: not asked (question mark, 吗 呢) and not skipped
    whatever the classifier says (``llm.extraction.hard_skip``: secrets, greetings, conditionals). Whether
    they do state something is the extractor's decision."""
    clauses = split_clauses(text)
    _previous, conditional = sentence_context(clauses)
    return [c for c, hypothetical in zip(clauses, conditional)
            if not (hard_skip(c.text, conditional=hypothetical) or is_question(c.text + c.mark))]


def text_skip_reason(user_message: str, conversation: list) -> str | None:
    """The layers of :func:`should_skip_extraction` that read only the turn's text: too short, small talk,
    nothing that may state something (every clause a question, a greeting or a hypothetical, unless the
    message answers the assistant's question). Cheap: grammatical cues, no model.

    Returns:
        The reason to skip, or None.
    """
    text = (user_message or "").strip()
    if meaningful_length(text) < MIN_MEANINGFUL_LENGTH:
        return SKIP_TOO_SHORT
    if is_small_talk(text):
        return SKIP_SMALL_TALK
    if not candidate_clauses(text) and not _answers_a_question(conversation):
        return SKIP_NO_STATEMENT
    return None


def memory_extract_and_save(
    *, agent_id: str, user_id: str, conversation_id: str, conversation: list[dict], extractor=None,
    turn_key: str | None = None,
) -> list[LongTermMemory]:
    """Extract items from a turn with one LLM call and save them (``auto_extract``) through the reconcile
    step, valid from the newest user message's time when the conversation carries it.

    The user's switch is checked again (it may have changed since the turn); the agent's item limit
    is enforced afterwards. A failing model call saves nothing and is logged.

    Args:
        agent_id: the agent, as configured in agents.yaml.
        user_id: the platform user id.
        conversation_id: the source conversation (for the log).
        conversation: the messages to extract from, usually the last turn.
        extractor: default ``factory.get_extractor()``.
        turn_key: when given, the items' ids are ``turn_key`` plus their position, and nothing is done
            if an earlier run of the same turn saved its items (a task retried after its worker died).

    Returns:
        The items stored (a repeat, which reinforces an item already stored, is not among them).
    """
    config = get_agents_config().get(agent_id)
    if config is None or not config.long_term_memory.enabled or not memory_saving_enabled(str(user_id)):
        return []
    if turn_key and LongTermMemory.objects.filter(pk__startswith=turn_key).exists():
        return []
    extractor = extractor or get_extractor()
    try:
        report = extraction_report(extractor, conversation)
    except LLMError as exc:
        logger.warning("memory extraction failed: %s", exc.reason)
        return []
    extracted = report.items
    withheld = withheld_words(report.withheld)
    if withheld:
        logger.info("extraction: %s", withheld)
    if not extracted:
        return []
    namespace = build_namespace(agent_namespace=config.long_term_memory.namespace, user_id=str(user_id))
    observed = _message_time(conversation)
    memories = []
    # Whether they wait for review: the same for every item of the turn (one agent, writer and user).
    review = review_required(agent_id=agent_id, source=Source.AUTO_EXTRACT, user_id=namespace.user_id)
    for position, item in enumerate(extracted):
        try:
            memory = memory_build(namespace=namespace, content=item.content, memory_type=item.type,
                                  source=Source.AUTO_EXTRACT, agent_id=agent_id, conversation_id=conversation_id,
                                  memory_id=f"{turn_key}{position:04d}" if turn_key else None, review=review)
        except MemoryError as exc:
            logger.warning("extracted item dropped: %s", exc.message)
            continue
        if observed is not None:
            memory.value_json["validFrom"] = iso(observed)
        memories.append(memory)
    if not memories:
        return []
    try:
        # The kinds of secret withheld (never the secrets) are the reason's details: the audit names them.
        results = memory_save_many_reconciled(
            namespace=namespace, memories=memories, event=VersionEvent.EXTRACT, audit_reason=EXTRACTED,
            audit_details={"withheld": list(report.withheld)} if report.withheld else None)
    except LLMError as exc:
        logger.warning("extracted memories not saved (embeddings): %s", exc.reason)
        return []
    except UserDataErased:
        logger.info("extracted memories not saved: the user's data was erased after the turn")
        return []
    except NamespaceLockTimeout:
        logger.warning("extracted memories not saved: the namespace stayed locked")
        return []
    memory_enforce_limit(namespace=namespace, max_items=config.long_term_memory.max_items)
    return [result.memory for result in results if result.created]


def _message_time(conversation: list) -> datetime | None:
    """When the newest user message of ``conversation`` was written (rows, or dicts with ``created_at``)."""
    for message in reversed(conversation or []):
        if _role(message) != "user":
            continue
        value = message.get("created_at") if isinstance(message, dict) else getattr(message, "created_at", None)
        if isinstance(value, str):
            value = parse_datetime(value)
        if isinstance(value, datetime):
            return value if timezone.is_aware(value) else timezone.make_aware(value, dt_timezone.utc)
        return None
    return None
