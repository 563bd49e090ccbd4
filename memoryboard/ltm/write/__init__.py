"""Everything that decides what is stored: extraction, the reconcile step, review, import, the agent's
memory tools, and edits from any surface. Imports ``search`` and ``store`` (below), never ``people``."""
