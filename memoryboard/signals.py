"""Signal receivers, connected once from AppConfig.ready(), each with a ``dispatch_uid``."""

from __future__ import annotations

from django.apps import apps
from django.db.models.signals import post_migrate
from django.test.signals import setting_changed

from memoryboard import agents_config
from memoryboard.ltm.search.embeddings import follow_states_changed
from memoryboard.ltm.store.signals import memory_states_changed
from memoryboard.ltm.write.reconcile import reconcile_approved
from memoryboard.ltm.write.review import memory_approved
from memoryboard.roles import ensure_role_groups


def _reset_cached_config(*, setting: str, **kwargs) -> None:
    # The model clients reset themselves on OPENAI_* (memoryboard.llm.factory has its own receiver).
    if setting.startswith("MEMORYBOARD_"):
        agents_config.reset_agents_config()


def connect() -> None:
    post_migrate.connect(
        ensure_role_groups,
        sender=apps.get_app_config("memoryboard"),
        dispatch_uid="memoryboard.ensure_role_groups",
    )
    setting_changed.connect(_reset_cached_config, dispatch_uid="memoryboard.reset_cached_config")
    # The HNSW index follows the items the store archives, deletes and restores (in their transaction).
    memory_states_changed.connect(follow_states_changed, dispatch_uid="memoryboard.index_follows_states")
    # An item approved in review is reconciled with the owner's current items (in the approval's transaction).
    memory_approved.connect(reconcile_approved, dispatch_uid="memoryboard.reconcile_approved")
