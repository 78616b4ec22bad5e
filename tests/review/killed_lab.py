"""A persisted review lab for tests that ``kill -9`` a process mid-job: the CLI or a ``qdash serve``.

The processes run on an embedded store in a temporary data directory with a configuration file
whose model is the fake LLM server of the test process; the test reads the store after the kill
(the killed process's lock dies with it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pymongo.database import Database

from qdash.db import close_database, open_database
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.review import REVIEWS
from qdash.review.jobs import JOBS
from qdash.settings import DatabaseSettings
from tests.served import seed_lab

from .conftest import KEY_ENV, TINY, fake_models


def lab_database(data_dir: Path) -> DatabaseSettings:
    return DatabaseSettings(
        name="qdash",
        data_dir=data_dir,
        embedded_persist=True,
        embedded_warn_documents=10**9,
        seed_demo_on_empty=False,
    )


def seed_killed_lab(data_dir: Path) -> None:
    """The tiny two-project review lab, written to ``data_dir``."""
    seed_lab(data_dir, TINY)


def lab_env(
    tmp_path: Path,
    data_dir: Path,
    fake: FakeLLMServer,
    *,
    database: dict[str, Any] | None = None,
    **review: Any,
) -> dict[str, str]:
    """The environment of a ``qdash`` subprocess on the lab: a configuration directory with the fake
    model and ``review`` settings (``concurrency`` 2 unless given), no other ``QDASH_`` variable.
    ``database``: settings over the embedded store in ``data_dir`` (``mongo_uri``, ``name``)."""
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    config = {
        "database": {
            "data_dir": str(data_dir),
            "name": "qdash",
            "seed_demo_on_empty": False,
            **(database or {}),
        },
        "copilot": {"default_model": "fake", "models": fake_models(fake)},
        "analysis": {"multimodal": False},
        "agent": {"max_retries": 0},
        "review": {"concurrency": 2, **review},
        "logging": {"level": "WARNING"},
    }
    (config_dir / "copilot.local.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDASH_")}
    env.update(
        {"QDASH_CONFIG_DIR": str(config_dir), KEY_ENV: "sk-test", "PYTHONUNBUFFERED": "1", "COLUMNS": "160"}
    )
    return env


def job_and_reviews(db: Database[dict[str, Any]], job_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The job document and every review of its results (whichever job made it)."""
    job = db[JOBS].find_one({"_id": job_id})
    assert job is not None
    return job, list(db[REVIEWS].find({"task_id": {"$in": job["task_ids"]}}))


def read_job(data_dir: Path, job_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """:func:`job_and_reviews`, read from the embedded store while no process holds it."""
    db = open_database(lab_database(data_dir))
    try:
        return job_and_reviews(db, job_id)
    finally:
        close_database(db)
