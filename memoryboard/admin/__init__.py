"""Django admin of memoryboard: long-term memory, chat messages and the audit log.

Importing this package registers the model admins on ``admin.site`` (admin autodiscovery imports it).
"""

from django.contrib import admin

from memoryboard.admin.audit import AuditLogAdmin
from memoryboard.admin.chat import ChatMessageAdmin
from memoryboard.admin.memory import LongTermMemoryAdmin
from memoryboard.admin.receipts import RetrievalReceiptAdmin

# The site is memoryboard (templates/admin/base_site.html shows the name, the dashboard links and the
# language switch). No model sidebar: its 280 px are the memory list's, which must fit 1366 px.
admin.site.site_header = admin.site.site_title = "memoryboard"
admin.site.enable_nav_sidebar = False

__all__ = ["AuditLogAdmin", "ChatMessageAdmin", "LongTermMemoryAdmin", "RetrievalReceiptAdmin"]
