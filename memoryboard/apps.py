from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MemoryboardConfig(AppConfig):
    name = "memoryboard"
    verbose_name = _("memoryboard")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core import checks

        from memoryboard import checks as memoryboard_checks
        from memoryboard import signals

        checks.register(memoryboard_checks.check_agents_config)
        checks.register(memoryboard_checks.check_namespace_spelling)
        checks.register(memoryboard_checks.check_default_agent)
        checks.register(memoryboard_checks.check_database_backend, checks.Tags.database)
        signals.connect()
