from django.contrib.auth import views as auth_views
from django.urls import path

from . import beliefs, conflicts, memory_import, memory_review, people, person_items, views
from .my_memories import actions, bulk, conversations, data, detail, listing, switches
from .playground import columns, page, plans, replay

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("playground/", page.playground, name="playground"),
    path("playground/replay/", replay.replay_view, name="playground-replay"),
    path("playground/context/<str:name>/", columns.context_column, name="playground-context"),
    path("playground/memory/<str:name>/plan/", plans.memory_plan_view, name="playground-memory-plan"),
    path("playground/memory/<str:name>/confirm/", plans.memory_confirm_view, name="playground-memory-confirm"),
    path("playground/memory/<str:name>/apply/", plans.memory_apply_view, name="playground-memory-apply"),
    path("support/users/", people.people_search, name="people"),
    # Platform user ids may hold "/": the actions come first.
    path("support/users/<path:user_id>/export/", people.person_export, name="person-export"),
    path("support/users/<path:user_id>/erase/", people.person_erase, name="person-erase"),
    path("support/users/<path:user_id>/items/<str:memory_id>/edit/", person_items.person_item_edit,
         name="person-item-edit"),
    path("support/users/<path:user_id>/items/<str:memory_id>/archive/", person_items.person_item_archive,
         name="person-item-archive"),
    path("support/users/<path:user_id>/items/<str:memory_id>/restore/", person_items.person_item_restore,
         name="person-item-restore"),
    path("support/users/<path:user_id>/items/<str:memory_id>/history/", person_items.person_item_history,
         name="person-item-history"),
    path("support/users/<path:user_id>/conflicts/<str:new_id>/<str:old_id>/", conflicts.person_conflict,
         name="person-conflict"),
    path("support/users/<path:user_id>/beliefs/", beliefs.person_beliefs, name="person-beliefs"),
    path("support/users/<path:user_id>/review/", memory_review.person_review, name="person-review"),
    path("support/memories/<str:memory_id>/revert/", memory_review.support_revert, name="support-memory-revert"),
    path("support/users/<path:user_id>/", people.person_detail, name="person"),
    path("me/memories/", listing.memory_list, name="my-memories"),
    path("me/memories/export/", data.memory_export, name="my-memories-export"),
    path("me/memories/import/", memory_import.memory_import_page, name="my-memories-import"),
    path("me/memories/delete-all/", bulk.memory_delete_all, name="my-memories-delete-all"),
    path("me/data/erase/", data.my_data_erase, name="my-data-erase"),
    path("me/memories/switch/", switches.memory_switch, name="my-memories-switch"),
    path("me/memories/pause-rules/", switches.memory_pause_rules, name="my-memories-pause-rules"),
    path("me/memories/add/", actions.memory_add, name="my-memories-add"),
    path("me/memories/bulk/", bulk.memory_bulk, name="my-memories-bulk"),
    path("me/memories/conflicts/<str:new_id>/<str:old_id>/", conflicts.my_conflict, name="my-memories-conflict"),
    path("me/memories/beliefs/", beliefs.my_beliefs, name="my-memories-beliefs"),
    path("me/memories/review/", memory_review.my_review, name="my-memories-review"),
    path("me/memories/undo/<str:batch_id>/", bulk.memory_undo_batch, name="my-memories-undo-batch"),
    # <path:>: ids stored before ids were checked (or by the platform) may hold "/"; they still open.
    path("me/conversations/<path:conversation_id>/", conversations.conversation_detail, name="my-conversation"),
    path("me/memories/<str:memory_id>/", detail.memory_detail, name="my-memories-detail"),
    path("me/memories/<str:memory_id>/edit/", detail.memory_edit, name="my-memories-edit"),
    path("me/memories/<str:memory_id>/delete/", actions.memory_delete, name="my-memories-delete"),
    path("me/memories/<str:memory_id>/restore/", actions.memory_restore, name="my-memories-restore"),
    path("me/memories/<str:memory_id>/pause/", actions.memory_pause, name="my-memories-pause"),
    path("me/memories/<str:memory_id>/resume/", actions.memory_resume, name="my-memories-resume"),
    path("me/memories/<str:memory_id>/revert/", memory_review.my_revert, name="my-memories-revert"),
]
