"""The strategy package is framework-free, so its tests must run without Django too.

The project-wide autouse fixtures need pytest-django's ``settings`` and the caches (the shared one is in the
database); they are overridden here by no-ops so that ``pytest -p no:django tests/strategies`` works (these
tests touch neither settings nor tasks nor caches nor the database).
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _tasks_inline_and_offline():
    yield


@pytest.fixture(autouse=True)
def _fresh_cache():
    yield
