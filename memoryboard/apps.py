import sys
import threading

from django.apps import AppConfig
from django.core import checks
from django.utils.translation import gettext_lazy as _

from memoryboard.llm.factory import warm_up


class TasksDbConfig(AppConfig):
    """django_tasks_db with a translated name in the admin (its own is English only)."""

    name = "django_tasks_db"
    label = "django_tasks_database"
    verbose_name = _("Background tasks")

    def ready(self) -> None:
        # Its receivers need the app registry (models): importable only once the apps are loaded.
        from django_tasks_db import signal_handlers  # noqa: F401


class MemoryboardConfig(AppConfig):
    name = "memoryboard"
    verbose_name = _("memoryboard")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The checks, receivers and background work import the models: importable only once the app registry
        # is ready.
        from memoryboard import background, checks as memoryboard_checks, signals

        checks.register(memoryboard_checks.check_agents_config)
        checks.register(memoryboard_checks.check_namespace_spelling)
        checks.register(memoryboard_checks.check_default_agent)
        checks.register(memoryboard_checks.check_database_backend, checks.Tags.database)
        checks.register(memoryboard_checks.check_embedder)
        checks.register(memoryboard_checks.check_api_language)
        checks.register(memoryboard_checks.check_secret_key, checks.Tags.security)
        signals.connect()
        if sys.argv[1:2] in (["runserver"], ["db_worker"], ["tasks_worker"]):
            _warm_up_in_background()
        if sys.argv[1:2] in (["db_worker"], ["tasks_worker"]):  # web processes: memoryboard.wsgi, gunicorn.conf.py
            background.start_background_work()


def _warm_up_in_background() -> None:
    """Load the embedder while the server or worker starts (a first search would wait ~1.5 s for it)."""
    threading.Thread(target=warm_up, name="memoryboard-warm-up", daemon=True).start()
