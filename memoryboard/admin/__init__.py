"""Django admin of memoryboard: long-term memory, chat messages and the audit log.

Importing this package registers the model admins on ``admin.site`` (admin autodiscovery imports it).
"""

from memoryboard.admin.audit import AuditLogAdmin
from memoryboard.admin.chat import ChatMessageAdmin
from memoryboard.admin.memory import LongTermMemoryAdmin
from memoryboard.admin.receipts import RetrievalReceiptAdmin

__all__ = ["AuditLogAdmin", "ChatMessageAdmin", "LongTermMemoryAdmin", "RetrievalReceiptAdmin"]
