"""The framework's end-to-end tests (fuzz, service, CLI) run on the shared session demo lab.

``small_lab`` is ``demo_lab.db`` (DemoSpec.small, seeded once per session by tests/conftest.py).
Tests treat it as read-only; the one test that exercises the MongoDB data store writes rows of a
unique session id and deletes them afterwards.
"""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database


@pytest.fixture(scope="session")
def small_lab(demo_lab: Any) -> Database[dict[str, Any]]:
    db: Database[dict[str, Any]] = demo_lab.db
    return db
