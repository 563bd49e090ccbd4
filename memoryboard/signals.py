"""Signal receivers, connected once from AppConfig.ready()."""

from __future__ import annotations

from django.test.signals import setting_changed


def _reset_cached_config(*, setting: str, **kwargs) -> None:
    # The model clients reset themselves on OPENAI_* (memoryboard.llm.factory has its own receiver).
    if setting.startswith("MEMORYBOARD_"):
        from memoryboard.ltm import config

        config.reset_agents_config()


def connect() -> None:
    from django.apps import apps
    from django.db.models.signals import post_migrate

    from memoryboard.roles import ensure_role_groups

    post_migrate.connect(
        ensure_role_groups,
        sender=apps.get_app_config("memoryboard"),
        dispatch_uid="memoryboard.ensure_role_groups",
    )
    setting_changed.connect(_reset_cached_config, dispatch_uid="memoryboard.reset_cached_config")
