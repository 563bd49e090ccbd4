"""Strings of installed apps that their own Simplified Chinese catalogs lack, marked here for ``makemessages``.

The project's catalog (LOCALE_PATHS) comes before the apps' own, so translating them in ``locale/`` fills the gaps.
"""

from django.utils.translation import gettext_noop

EXTRA_TEXTS = (
    # django.contrib.admin 5.2, admin/app_list.html (table headers for screen readers)
    gettext_noop("Model name"),
    gettext_noop("Add link"),
    gettext_noop("Change or view list link"),
    # django_tasks_db (the task results in the admin)
    gettext_noop("Task Result"),
    gettext_noop("Task Results"),
    gettext_noop("status"),
    gettext_noop("enqueued at"),
    gettext_noop("started at"),
    gettext_noop("finished at"),
    gettext_noop("args kwargs"),
    gettext_noop("priority"),
    gettext_noop("task path"),
    gettext_noop("worker id"),
    gettext_noop("queue name"),
    gettext_noop("backend name"),
    gettext_noop("run after"),
    gettext_noop("return value"),
    gettext_noop("exception class path"),
    gettext_noop("traceback"),
)
