"""Fixtures shared by every test package.

``mongo_db`` is a fresh database per test: the in-memory embedded store by default, or a uniquely
named database on a real server when ``QDASH_TEST_MONGO_URI`` is set (so storage tests run on both).
Sub-packages add their own fixtures in their own conftest.py.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import structlog
from pymongo import MongoClient
from pymongo.database import Database

from qdash.db import close_database, open_database
from qdash.demo import DemoLab, DemoSpec, seed_demo
from qdash.settings import DatabaseSettings, Settings, load_settings
from tests.served import SEEDED_LABS
from tests.support.upstream_lab import UpstreamLab, prepare_upstream_lab

pytest_plugins = ["tests.support.pytest_plugin"]  # fake_llm / fake_ollama fixtures

REAL_MONGO_URI = os.environ.get("QDASH_TEST_MONGO_URI")


SHARED_WORKER = dict.fromkeys(
    (
        "tests/evaluation/test_visible.py",
        "tests/evaluation/test_scripted.py",
        "tests/evaluation/test_investigation_oracle.py",
    ),
    "evaluation visible run",
)
"""Test modules that need one expensive session fixture (here the visible run of every question,
``visible_results``, about two CPU-minutes): under xdist they share the worker that builds it."""


HEAVY_FIRST = (
    "tests/evaluation/test_visible.py",
    "tests/review/test_server_takeover.py",
    "tests/review/test_cli_beside_server.py",
    "tests/api/test_ui_browser.py",
    "tests/api/test_dashboard_views.py",
    "tests/api/test_ui_investigation.py",
    "tests/api/test_ui_dashboard_figures.py",
    "tests/copilot/tools/test_fuzz.py",
    "tests/demo/test_cli.py",
    "tests/review/test_crash_resume.py",
    "tests/api/test_run_figures.py",
    "tests/test_wheel_install.py",
    "tests/actions/test_demo_flow.py",
    "tests/api/test_ui_served.py",
    "tests/api/test_chat_stop.py",
    "tests/api/test_ui_reviews.py",
)
"""Modules that run for tens of seconds each (served subprocesses, kill -9 and takeover, a browser,
the visible evaluation run), heaviest first: they are collected, and so scheduled, before the rest.
Why: left in collection order, or in xdist's default order by number of tests, these few-test
modules came last and one worker ran them alone while the others had finished."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``HEAVY_FIRST`` modules first (in that order); the rest keep their order (the sort is stable)."""
    rank = {path: index for index, path in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` (CI) with ``SHARED_WORKER``: a module's tests stay on one worker (its
    module fixtures are built once), and the modules in ``SHARED_WORKER`` go to one worker together.

    Why not ``--dist loadgroup`` and ``xdist_group`` marks: with pytest 9.2 xdist 3.8 can no longer
    rename the test ids that carry the group, so the marks are silently ignored.
    """
    if config.getvalue("dist") != "loadscope":
        return None
    config.option.loadscopereorder = False  # keep HEAVY_FIRST's order, not "most tests first"
    from xdist.scheduler import LoadScopeScheduling

    class SharedWorkerScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_WORKER.get(scope, scope)

    return SharedWorkerScheduling(config, log)


@pytest.fixture(autouse=True)
def _logging_configuration_restored() -> Iterator[None]:
    """Each test ends with structlog configured as it began. Why: an in-process CLI command
    (``CliRunner``) configures logging for a command, warnings only, and leaves it so (a real command
    is the whole process); a later test on the same worker then captured no INFO event at all. The root
    logger's level, which it sets too, likewise."""
    saved, root_level = structlog.get_config(), logging.getLogger().level
    yield
    structlog.configure(**saved)
    logging.getLogger().setLevel(root_level)


@pytest.fixture(scope="session", autouse=True)
def _seeded_labs_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Where ``tests.served.seed_lab`` keeps each lab it seeded this session: under xdist the folder
    the workers' temporary folders share (each lab is seeded by one worker for all), else this
    session's temporary folder."""
    base = tmp_path_factory.getbasetemp()
    SEEDED_LABS[:] = [(base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "seeded-labs"]


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


def _upstream_lab_settings(data_dir: Path) -> Settings:
    """Our production start-up on the upstream-shaped lab: a persisted embedded store (the lab is
    written, closed, then opened by ``prepare_database``), or a throw-away database on a real
    MongoDB with ``QDASH_TEST_MONGO_URI``."""
    name = f"qdash_upstream_{uuid.uuid4().hex[:12]}"
    return load_settings(
        database={
            "mongo_uri": REAL_MONGO_URI,
            "name": name,
            "data_dir": str(data_dir),
            "embedded_persist": True,
            "seed_demo_on_empty": False,
        }
    )


def _start_upstream_lab(data_dir: Path) -> Iterator[UpstreamLab]:
    settings = _upstream_lab_settings(data_dir)
    lab = prepare_upstream_lab(settings)
    try:
        yield lab
    finally:
        if REAL_MONGO_URI:
            lab.db.client.drop_database(lab.db.name)
        close_database(lab.db)


@pytest.fixture(scope="session")
def upstream_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpstreamLab]:
    """The upstream-shaped lab (``tests.support.upstream_lab``) after our start-up, once per session.

    Read-only: tests that write use ``upstream_lab_db``.
    """
    yield from _start_upstream_lab(tmp_path_factory.mktemp("upstream-lab"))


@pytest.fixture
def upstream_lab_db(tmp_path: Path) -> Iterator[UpstreamLab]:
    """A fresh, writable upstream-shaped lab after our start-up (one per test)."""
    yield from _start_upstream_lab(tmp_path / "upstream-lab")
