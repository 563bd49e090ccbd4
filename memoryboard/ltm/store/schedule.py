"""A turn that every process runs on a thread of its own, now and then every so many seconds
(``memoryboard.background`` starts them: the expiry sweep's schedule, the erase follower)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from django.db import close_old_connections

logger = logging.getLogger(__name__)


class Schedule:
    """``turn`` on a daemon thread of this process: at :meth:`start`, then every ``interval()`` seconds (read at
    each turn: 0 stops it, and :meth:`start` does nothing). Started once per process: a forked child whose parent
    had started it starts its own. A turn that raises is logged as ``failed`` and the schedule goes on."""

    def __init__(self, name: str, *, interval: Callable[[], float], turn: Callable[[], object], failed: str) -> None:
        self.name, self.interval, self.turn, self.failed = name, interval, turn, failed
        self.pid: int | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        if self.interval() <= 0 or (self.pid == os.getpid() and self.thread is not None and self.thread.is_alive()):
            return
        self.pid, self.thread = os.getpid(), threading.Thread(target=self._forever, name=self.name, daemon=True)
        self.thread.start()

    def _forever(self) -> None:
        while (seconds := self.interval()) > 0:
            try:
                self.turn()
            except Exception:
                logger.exception(self.failed)
            finally:
                close_old_connections()
            time.sleep(seconds)
