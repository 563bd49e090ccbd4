"""Plain reads and writes of long-term memory's tables: items and their states, versions, expiry, the
per-namespace lock and the erase gate. Imports nothing of ``search``, ``write`` or ``people``: a change
the index must follow is announced by a signal (``store.signals``)."""
