"""Fixtures shared by every test package.

``mongo_db`` is a fresh database per test: the in-memory embedded store by default, or a uniquely
named database on a real server when ``QDASH_TEST_MONGO_URI`` is set (so storage tests run on both).
Sub-packages add their own fixtures in their own conftest.py.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient
from pymongo.database import Database

from qdash.db import open_database
from qdash.demo import DemoLab, DemoSpec, seed_demo
from qdash.settings import DatabaseSettings, Settings, load_settings

pytest_plugins = ["qdash.testing.pytest_plugin"]  # fake_llm / fake_ollama fixtures

REAL_MONGO_URI = os.environ.get("QDASH_TEST_MONGO_URI")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Default settings with data kept in a temporary folder."""
    return load_settings(database={"data_dir": str(tmp_path / "data"), "mongo_uri": None})


@pytest.fixture
def mongo_db() -> Iterator[Database[dict[str, Any]]]:
    """A fresh, empty database: in-memory store, or a throw-away database on a real MongoDB."""
    if REAL_MONGO_URI:
        client: MongoClient[dict[str, Any]] = MongoClient(REAL_MONGO_URI, tz_aware=True)
        name = f"qdash_test_{uuid.uuid4().hex[:12]}"
        try:
            yield client[name]
        finally:
            client.drop_database(name)
            client.close()
    else:
        # The production embedded store (fixes included), in memory: what `qdash serve` runs on.
        yield open_database(DatabaseSettings(name="qdash_test", embedded_persist=False))


@pytest.fixture(scope="session")
def demo_lab() -> Iterator[DemoLab]:
    """``DemoSpec.small()`` seeded once per session (both projects, both chips, every special qubit).

    Treat ``db`` as read-only: tests that write use ``mongo_db``. With ``QDASH_TEST_MONGO_URI`` the
    lab is seeded into a throw-away database on that server.
    """
    spec = DemoSpec.small(end_at=datetime.now(UTC).replace(minute=0, second=0, microsecond=0))
    if REAL_MONGO_URI:
        client: MongoClient[dict[str, Any]] = MongoClient(REAL_MONGO_URI, tz_aware=True)
        name = f"qdash_demo_{uuid.uuid4().hex[:12]}"
        try:
            yield DemoLab(client[name], seed_demo(client[name], spec), spec)
        finally:
            client.drop_database(name)
            client.close()
    else:
        # The small lab is past the store's "large collection" warning by design; keep test logs quiet.
        quiet = DatabaseSettings(name="qdash_demo_lab", embedded_persist=False, embedded_warn_documents=10**9)
        db = open_database(quiet)
        yield DemoLab(db, seed_demo(db, spec), spec)
