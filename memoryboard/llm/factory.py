"""The configured models, built from Django settings and cached per process.

``OPENAI_BASE_URL`` empty means offline chat: the offline summarizer, the offline chat model and the
offline extractor (the statement classifier). The embedder is its own setting, ``MEMORYBOARD_EMBEDDER`` (see :func:`get_embedder`). The caches are cleared when an ``OPENAI_*`` setting changes
(``setting_changed``, e.g. in tests) and by :func:`reset_models`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from threadpoolctl import threadpool_limits

from memoryboard.llm import chat, embeddings, extraction
from memoryboard.llm.attributes import attribute_space
from memoryboard.llm.pair_model import pair_model
from memoryboard.llm.offline_chat import OfflineChatModel
from memoryboard.llm.openai_client import make_client
from memoryboard.llm.summarizer import OpenAISummarizer
from memoryboard.strategies.summarizer import OfflineSummarizer

if TYPE_CHECKING:
    import openai

    from memoryboard.llm.chat import ChatModel
    from memoryboard.llm.embeddings import Embedder
    from memoryboard.llm.extraction import MemoryExtractor
    from memoryboard.strategies.summarizer import Summarizer

T = TypeVar("T")

_cache: dict[str, Any] = {}
_lock = threading.RLock()


def _cached(key: str, build: Callable[[], T]) -> T:
    with _lock:
        if key not in _cache:
            _cache[key] = build()
        return _cache[key]


def is_online() -> bool:
    """True when an OpenAI-compatible endpoint is configured."""
    return bool(getattr(settings, "OPENAI_BASE_URL", ""))


def get_client() -> openai.OpenAI:
    """The shared ``openai`` client (online mode only)."""

    def build() -> openai.OpenAI:
        return make_client(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            timeout=float(settings.OPENAI_TIMEOUT_SECONDS),
            max_retries=int(settings.OPENAI_MAX_RETRIES),
        )

    return _cached("client", build)


def get_summarizer() -> Summarizer:
    """The summarizer for context and memory strategies."""

    def build() -> Summarizer:
        if is_online():
            return OpenAISummarizer(get_client(), settings.OPENAI_CHAT_MODEL)

        return OfflineSummarizer()

    return _cached("summarizer", build)


EMBEDDER_CHOICES = ("use", "hashing", "openai")


def get_embedder() -> Embedder:
    """The embedder named by ``MEMORYBOARD_EMBEDDER``, independent of the chat model.

    ``use`` (default): the offline multilingual sentence encoder; ``hashing``: hashed character n-grams
    (light, matches shared characters only); ``openai``: ``OPENAI_EMBEDDING_MODEL`` at ``OPENAI_BASE_URL``
    (without both, the offline default, and ``manage.py check`` says so).
    """

    def build() -> Embedder:
        choice = embedder_choice()
        if choice == "openai" and is_online() and settings.OPENAI_EMBEDDING_MODEL:
            return embeddings.OpenAIEmbedder(get_client(), settings.OPENAI_EMBEDDING_MODEL)
        if choice == "hashing":
            return embeddings.HashingEmbedder()
        return embeddings.UniversalSentenceEncoder()

    return _cached("embedder", build)


def embedder_choice() -> str:
    """The configured embedder kind, lower-cased (``memoryboard.E00x`` checks it is known)."""
    return str(getattr(settings, "MEMORYBOARD_EMBEDDER", "use") or "use").strip().lower()


def warm_up() -> None:
    """Prepare a web or worker process at start-up: numpy's BLAS on one thread, and the configured
    offline embedder loaded now rather than on the first search.

    One BLAS thread: the products a request makes are small (a scope's 5,000 × 512 cosines take 0.06 ms;
    the query embedding's layers less), so a second OpenBLAS thread brings nothing, yet once woken it
    spins on the other core for milliseconds, which the other worker processes needed (a warm
    5,000-item search burnt 25 ms of CPU instead of 10-12, benchmarks/README.md § Retrieval). Set once
    here for the whole process, instead of around each product as before: same speed (§ Proxy,
    stop 20: overhead p50 at one client 18.1 / 19.4 ms against 18.8 / 18.6 ms, alternating runs) and
    one place instead of one per call site. Requests run in parallel across processes, not inside BLAS.
    The offline embedder's attribute prototypes are embedded here too, not on the first search, and the
    reconcile's pair model read.
    """
    threadpool_limits(limits=1, user_api="blas")  # for the rest of the process (no context manager)
    embedder = get_embedder()
    if hasattr(embedder, "warm_up"):
        embedder.warm_up()
        # The attribute prototypes' vectors (the search's attribute term, reconcile): ~0.9 s with USE.
        attribute_space(embedder.name, embedder.embed)
        pair_model()  # the offline reconcile's weights (llm.pair_model), read from disk once


def get_chat_model() -> ChatModel:
    """The chat model of the agent runtime."""

    def build() -> ChatModel:
        if is_online():
            return chat.OpenAIChatModel(get_client(), settings.OPENAI_CHAT_MODEL)
        return OfflineChatModel()

    return _cached("chat", build)


def get_extractor() -> MemoryExtractor:
    """The long-term memory extractor: the chat model online, the statement classifier offline."""

    def build() -> MemoryExtractor:
        if is_online():
            return extraction.LLMExtractor(get_chat_model())
        return extraction.OfflineExtractor()

    return _cached("extractor", build)


def models_status() -> dict[str, Any]:
    """Which models are in use, for the UI banner and health output. Makes no request.

    Returns:
        ``{"offline": bool (every model offline), "any_offline": bool, "base_url": str,
        "chat": {...}, "summarizer": {...}, "embedder": {...}, "extractor": {...}}``, each part
        ``{"name": str, "offline": bool}``; the embedder's also ``"dim"`` (None until known).
    """
    embedder = get_embedder()
    parts = {
        "chat": get_chat_model(),
        "summarizer": get_summarizer(),
        "embedder": embedder,
        "extractor": get_extractor(),
    }
    status: dict[str, Any] = {
        name: {"name": str(getattr(model, "name", type(model).__name__)),
               "offline": bool(getattr(model, "is_offline", True))}
        for name, model in parts.items()
    }
    # Reading ``dim`` of a remote embedder of an unknown model would make a request.
    status["embedder"]["dim"] = (
        embedder.known_dim if hasattr(type(embedder), "known_dim") else getattr(embedder, "dim", None)
    )
    offline_flags = [part["offline"] for part in status.values()]
    status["offline"] = all(offline_flags)
    status["any_offline"] = any(offline_flags)
    status["base_url"] = settings.OPENAI_BASE_URL if is_online() else ""
    return status


def reset_models() -> None:
    """Forget the cached client and models; the next call builds them from the current settings."""
    with _lock:
        client = _cache.pop("client", None)
        _cache.clear()
    if client is not None:
        try:
            client.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass


@receiver(setting_changed, dispatch_uid="memoryboard.llm.factory.reset_models")
def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting.startswith("OPENAI_") or setting == "MEMORYBOARD_EMBEDDER":
        reset_models()
