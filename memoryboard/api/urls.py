from django.urls import path, re_path
from rest_framework.routers import SimpleRouter

from . import views
from .agent_views import AgentChatView
from .import_views import MemoryImportView
from .my_data_views import MyDataEraseView, MyDataView

router = SimpleRouter(trailing_slash="/?")
router.register("memories", views.MemoryViewSet, basename="memory")
router.register("conversations", views.ConversationViewSet, basename="conversation")

urlpatterns = [
    path("health/", views.health, name="api-health"),
    path("ping/", views.PingView.as_view(), name="api-ping"),
    path("auth/token/", views.TokenView.as_view(), name="api-token"),
    path("strategies/", views.StrategyListView.as_view(), name="api-strategies"),
    re_path(r"^strategies/replay/?$", views.ContextReplayView.as_view(), name="api-context-replay"),
    re_path(r"^strategies/context/(?P<name>[^/]+)/apply/?$", views.ContextApplyView.as_view(), name="api-context-apply"),
    re_path(r"^strategies/memory/(?P<name>[^/]+)/plan/?$", views.MemoryPlanView.as_view(), name="api-memory-plan"),
    re_path(r"^strategies/memory/(?P<name>[^/]+)/apply/?$", views.MemoryApplyView.as_view(), name="api-memory-apply"),
    re_path(r"^agents/(?P<agent>[^/]+)/chat/?$", AgentChatView.as_view(), name="api-agent-chat"),
    re_path(r"^memories/import/?$", MemoryImportView.as_view(), name="api-memory-import"),
    re_path(r"^me/data/?$", MyDataView.as_view(), name="api-my-data"),
    re_path(r"^me/data/erase/?$", MyDataEraseView.as_view(), name="api-my-data-erase"),
    *router.urls,
    # Keep last: any other URL under /api/v1/ answers a JSON 404.
    re_path(r"^.*$", views.not_found, name="api-not-found"),
]
