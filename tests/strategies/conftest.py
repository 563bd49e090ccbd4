"""The strategy package is framework-free, so its tests must run without Django too.

The project-wide autouse fixture needs pytest-django's ``settings``; it is overridden here by a no-op so that
``pytest -p no:django tests/strategies`` works (these tests touch neither settings nor tasks nor the database).
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _tasks_inline_and_offline():
    yield
