"""Models: the two shared tables of the agent platform and the dashboard's own tables."""

from .audit import AuditLog
from .chat import ChatMessage, ConversationOwner
from .embedding import AnnChange, MemoryEmbedding, vector_checksum
from .lifecycle import (
    AskFirst,
    EraseTombstone,
    MemoryAccess,
    MemoryFlag,
    MemoryState,
    MemoryStateChange,
    PauseRule,
    UserMemorySettings,
    WorkerHeartbeat,
)
from .memory import ArchivedReason, LongTermMemory, MemoryChange, MemoryType, Source
from .playground import PlaygroundTrace, ReplayShare
from .retrieval import RetrievalReceipt
from .summary import SummaryCacheEntry
from .version import MemoryVersion, VersionEvent

__all__ = [
    "AnnChange",
    "AskFirst",
    "ArchivedReason",
    "AuditLog",
    "ChatMessage",
    "ConversationOwner",
    "EraseTombstone",
    "LongTermMemory",
    "MemoryAccess",
    "MemoryChange",
    "MemoryEmbedding",
    "MemoryFlag",
    "MemoryState",
    "MemoryStateChange",
    "MemoryType",
    "MemoryVersion",
    "PauseRule",
    "RetrievalReceipt",
    "PlaygroundTrace",
    "ReplayShare",
    "Source",
    "SummaryCacheEntry",
    "UserMemorySettings",
    "VersionEvent",
    "vector_checksum",
    "WorkerHeartbeat",
]
