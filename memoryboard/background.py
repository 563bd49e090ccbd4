"""What every process that serves or works runs beside its requests and tasks, from the moment it starts.

- The staff-search index follower (``ltm.search.ann.ann_follow_start``): this host's index files follow the
  database's change log at once and every ``MEMORYBOARD_ANN_FOLLOW_SECONDS``, whether the process writes,
  searches or stays idle (an erase's vectors leave an idle host's files within that time).
- The erase follower (``ltm.people.process_texts.erase_follow_start``): when a user's data was erased by any
  process, this one empties its caches of what users said within ``MEMORYBOARD_ERASE_FOLLOW_SECONDS``.
- The expiry sweep's schedule (``ltm.store.tasks.expiry_sweep_start``): items past their expiry are archived
  every ``MEMORYBOARD_EXPIRY_SWEEP_MINUTES`` by one process of the deployment.

Started once per process: by ``memoryboard/wsgi.py`` (``runserver`` and WSGI servers that load the
application in the process that serves it), in each gunicorn worker by ``gunicorn.conf.py``'s
``post_worker_init`` (gunicorn's master only forks: a thread started there would be copied into every
worker holding whatever lock it held), and by ``AppConfig.ready`` in ``db_worker`` and ``tasks_worker``.
"""

from __future__ import annotations

from memoryboard.ltm.people.process_texts import erase_follow_start
from memoryboard.ltm.search.ann import ann_follow_start
from memoryboard.ltm.store.tasks import expiry_sweep_start


def start_background_work() -> None:
    """Start this process's index follower, erase follower and expiry sweep schedule (each once per process)."""
    ann_follow_start()
    erase_follow_start()
    expiry_sweep_start()
