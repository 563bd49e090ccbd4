"""Free TCP ports for the servers the tests and benchmarks start (gunicorn, the fake OpenAI server, the
live server), inside a range the caller may set so that parallel runs can be kept apart.

``MEMORYBOARD_TEST_PORTS=40000-40999`` (or one port, ``40000``) confines every server to that range;
unset, the system picks a free ephemeral port. Inside a range the search starts at a random port, skips
ports that are taken, and never hands a port out twice in one process, so two runs given the same range
rarely meet; two runs given disjoint ranges never do.

Example:
    port = free_port()                                   # for a subprocess: gunicorn --bind 127.0.0.1:{port}
    server = bind_in_range(lambda port: ThreadingHTTPServer(("127.0.0.1", port), Handler))   # in process
"""

from __future__ import annotations

import os
import random
import re
import socket
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

PORTS_VARIABLE = "MEMORYBOARD_TEST_PORTS"
HOST = "127.0.0.1"

_given: set[int] = set()
_lock = threading.Lock()
T = TypeVar("T")


def port_range() -> range | None:
    """The ports of ``MEMORYBOARD_TEST_PORTS`` (``first-last``, inclusive, or one port); ``None`` when unset.

    Raises:
        ValueError: the variable is not a range of ports between 1 and 65535.
    """
    spec = os.environ.get(PORTS_VARIABLE, "").strip()
    if not spec:
        return None
    found = re.fullmatch(r"(\d+)(?:-(\d+))?", spec)
    if found is None:
        raise ValueError(f"{PORTS_VARIABLE}={spec!r}: expected FIRST-LAST, e.g. 40000-40999")
    low, high = int(found[1]), int(found[2] or found[1])
    if not 1 <= low <= high <= 65535:
        raise ValueError(f"{PORTS_VARIABLE}={spec!r}: expected 1 <= FIRST <= LAST <= 65535")
    return range(low, high + 1)


def _candidates() -> Iterator[int]:
    ports = port_range()
    if ports is None:
        while True:
            yield 0
    start = random.randrange(len(ports))
    for offset in range(len(ports)):
        yield ports[(start + offset) % len(ports)]
    raise OSError(f"no free port left in {PORTS_VARIABLE}={os.environ[PORTS_VARIABLE]}")


def bind_in_range(bind: Callable[[int], T], host: str = HOST) -> T:
    """``bind(port)`` with the first port of the range it can bind (``bind(0)`` when no range is set);
    ``bind`` raises ``OSError`` for a port in use, as ``socket.bind`` and ``http.server`` do."""
    for port in _candidates():
        with _lock:
            if port and port in _given:
                continue
            try:
                result = bind(port)
            except OSError:
                if port == 0:
                    raise
                continue
            _given.add(port)
            return result
    raise AssertionError("unreachable")


def free_port(host: str = HOST) -> int:
    """A port free now on ``host``, in the range when one is set, for a server started next by another
    process (it binds it itself; the port is not held in between)."""

    def probe(port: int) -> int:
        with socket.socket() as sock:
            sock.bind((host, port))
            found = sock.getsockname()[1]
        _given.add(found)
        return found

    return bind_in_range(probe, host)
