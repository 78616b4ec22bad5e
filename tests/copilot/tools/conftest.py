"""A small demo lab shared by the framework's end-to-end tests (fuzz, service, CLI).

Seeded once per session into an in-memory store (DemoSpec.small: both projects and chips, every
failure kind; a few seconds). Tests only read it or write per-session data-store rows.
"""

from __future__ import annotations

from typing import Any

import mongomock_ng
import pytest
from pymongo.database import Database

from qdash.demo import DemoSpec, seed_demo


@pytest.fixture(scope="session")
def small_lab() -> Database[dict[str, Any]]:
    db: Database[dict[str, Any]] = mongomock_ng.MongoClient(tz_aware=True)["small_lab"]
    seed_demo(db, DemoSpec.small())
    return db
