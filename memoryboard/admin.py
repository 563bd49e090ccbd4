from django.contrib import admin

from memoryboard.models import ChatMessage, LongTermMemory


@admin.register(LongTermMemory)
class LongTermMemoryAdmin(admin.ModelAdmin):
    list_display = ["id", "namespace", "content", "archived", "updated_at"]


@admin.register(ChatMessage)
class ChatMessageAdmin(admin.ModelAdmin):
    list_display = ["conversation_id", "id", "role", "agent_id", "user_id", "created_at"]
