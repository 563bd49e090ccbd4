"""``/v1/``: the OpenAI-compatible endpoint (Chat Completions and models)."""

from django.urls import re_path

from .openai_views import ChatCompletionsView, ModelsView

urlpatterns = [
    re_path(r"^chat/completions/?$", ChatCompletionsView.as_view(), name="openai-chat-completions"),
    re_path(r"^models/?$", ModelsView.as_view(), name="openai-models"),
]
