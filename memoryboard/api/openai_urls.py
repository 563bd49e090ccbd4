"""``/v1/``: the OpenAI-compatible endpoint (Chat Completions and models)."""

from django.urls import re_path

from .openai_views import ChatCompletionsView, ModelsView
from .views import not_found

urlpatterns = [
    re_path(r"^chat/completions/?$", ChatCompletionsView.as_view(), name="openai-chat-completions"),
    re_path(r"^models/?$", ModelsView.as_view(), name="openai-models"),
    # Keep last: any other URL under /v1/ answers a JSON 404 (never Django's page listing the URL patterns).
    re_path(r"^.*$", not_found, name="openai-not-found"),
]
