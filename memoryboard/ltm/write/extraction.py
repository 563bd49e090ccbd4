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
from memoryboard.llm.errors import LLMError
from memoryboard.llm.factory import get_extractor
from memoryboard.ltm.store.erase_gate import UserDataErased
from memoryboard.ltm.store.items import MemoryError, normalize_content
from memoryboard.ltm.store.lifecycle import memory_enforce_limit
from memoryboard.ltm.store.locks import NamespaceLockTimeout
from memoryboard.ltm.store.selectors import namespace_q
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.write.reconcile import iso, memory_save_many_reconciled
from memoryboard.ltm.write.tools import memory_saving_enabled
from memoryboard.models import LongTermMemory, Source, VersionEvent
from memoryboard.models.labels import EXTRACTED
from memoryboard.models.namespaces import build_namespace

logger = logging.getLogger(__name__)

# Letters and digits that count towards the length; a CJK character carries about a word's meaning.
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORDCHAR = re.compile(r"[^\W_]")
MIN_MEANINGFUL_LENGTH = 8
SMALL_TALK_MAX_CHARS = 120

_SMALL_TALK_WORDS = (
    r"(?:"
    r"hi|hello|hey|yo|hiya|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|"
    r"thanks?(?: you)?(?: (?:so|very) much)?|thx|ty|ok(?:ay)?|k|cool|nice|great|sure|yes|yeah|yep|no|nope|"
    r"got it|i see|sounds good|lol|ha|awesome|perfect|alright|understood|fine|"
    r"there|everyone|all|again|a lot|please|"
    r"你好|您好|嗨|哈喽|早上好|早安|中午好|下午好|晚上好|晚安|再见|拜拜|谢谢(?:你|您)?|多谢|感谢|"
    r"好的|好|行|可以|嗯|哦|噢|哈|呵呵|明白了?|知道了|收到|了解|没问题|不客气|对|是的|不是|没事"
    r")"
)
# A phrase made only of small-talk words: "ok thanks", "hello there", "好的谢谢".
_SMALL_TALK = re.compile(rf"^{_SMALL_TALK_WORDS}(?:\s*{_SMALL_TALK_WORDS})*$", re.IGNORECASE)
_PHRASE_SPLIT = re.compile(r"[,，.。!！?？~～、;；:：]+")

# Statements about oneself: what long-term memory is about.
_SELF = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|our|us)\b|我|咱|本人|remember|记住",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)(?=\s)")

SKIP_DISABLED_AGENT = "extraction is disabled for this agent"
SKIP_USER_SWITCH = "the user turned off saving new memories"
SKIP_TOO_SHORT = "too short"
SKIP_SMALL_TALK = "small talk"
SKIP_NO_SELF_STATEMENT = "nothing new: no statement about the user"
SKIP_ALREADY_KNOWN = "nothing new: already remembered"


def meaningful_length(text: str) -> int:
    """Letters and digits, each CJK character counting two."""
    return len(_WORDCHAR.findall(text)) + len(_CJK.findall(text))


def is_small_talk(text: str) -> bool:
    """True when every phrase of ``text`` is a greeting, thanks or acknowledgement (Chinese or English)."""
    if len(text) > SMALL_TALK_MAX_CHARS:
        return False
    phrases = [p.strip() for p in _PHRASE_SPLIT.split(text.strip()) if p.strip()]
    return bool(phrases) and all(_SMALL_TALK.match(p) for p in phrases)


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
    too short; greetings and small talk (Chinese and English); nothing new (no statement about the
    user, unless it answers the assistant's question; or every such statement already remembered).

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
    text = (user_message or "").strip()
    if meaningful_length(text) < MIN_MEANINGFUL_LENGTH:
        return SKIP_TOO_SHORT
    if is_small_talk(text):
        return SKIP_SMALL_TALK
    statements = [s.strip() for s in _SENTENCES.split(text) if _SELF.search(s)]
    if not statements:
        return None if _answers_a_question(conversation) else SKIP_NO_SELF_STATEMENT
    known = [k for k in _known_contents(agent_config, str(user_id)) if k]
    if known and all(
        any(normalize_content(s) in k or k in normalize_content(s) for k in known) for s in statements
    ):
        return SKIP_ALREADY_KNOWN
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
        extracted = extractor.extract(conversation)
    except LLMError as exc:
        logger.warning("memory extraction failed: %s", exc.reason)
        return []
    if not extracted:
        return []
    namespace = build_namespace(agent_namespace=config.long_term_memory.namespace, user_id=str(user_id))
    observed = _message_time(conversation)
    memories = []
    for position, item in enumerate(extracted):
        try:
            memory = memory_build(namespace=namespace, content=item.content, memory_type=item.type,
                                  source=Source.AUTO_EXTRACT, agent_id=agent_id, conversation_id=conversation_id,
                                  memory_id=f"{turn_key}{position:04d}" if turn_key else None)
        except MemoryError as exc:
            logger.warning("extracted item dropped: %s", exc.message)
            continue
        if observed is not None:
            memory.value_json["validFrom"] = iso(observed)
        memories.append(memory)
    if not memories:
        return []
    try:
        results = memory_save_many_reconciled(namespace=namespace, memories=memories, event=VersionEvent.EXTRACT,
                                              audit_reason=EXTRACTED)
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
