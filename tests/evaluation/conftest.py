"""The evaluation's lab: the session's small demo lab with settings and the oracle (read-only)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from qdash.db import open_database
from qdash.db.indexes import ensure_indexes
from qdash.demo import ChipPlan, DemoLab, DemoSpec, seed_demo
from qdash.evaluation import EvalLab, QuestionResult, load_questions, run_visible
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.settings import DatabaseSettings, load_settings

ONE_DAY = DemoSpec(
    end_at=datetime(2026, 11, 25, tzinfo=UTC),
    chips=(ChipPlan("proj-demo", "64Qv3", "square-lattice-mux-64", "alice", 1, 45, bring_up=False),),
    ai_reviews=False,
)
"""One weekly run of 64Qv3 (543 finished results: failed fits, the TLS dip, bad qubits), 0.3 s to seed."""


@pytest.fixture(scope="session")
def eval_lab(demo_lab: DemoLab, tmp_path_factory: pytest.TempPathFactory) -> EvalLab:
    data_dir: Path = tmp_path_factory.mktemp("eval-data")
    settings = load_settings(database={"data_dir": str(data_dir), "mongo_uri": None})
    ensure_indexes(demo_lab.db)  # as `qdash serve` and EvalLab.seed do (else the store scans every run)
    return EvalLab(demo_lab.db, demo_lab.report, settings)


@pytest.fixture(scope="session")
def visible_results(eval_lab: EvalLab) -> dict[str, QuestionResult]:
    """One visible run of every question, shared by the tests that compare against it."""
    return {r.id: r for r in asyncio.run(run_visible(eval_lab, list(load_questions())))}


@pytest.fixture(scope="session")
def review_eval_lab(tmp_path_factory: pytest.TempPathFactory) -> ReviewLab:
    """A writable one-day lab for the review suite (review jobs store their verdicts in it)."""
    db = open_database(
        DatabaseSettings(name="qdash_review_eval", embedded_persist=False, embedded_warn_documents=10**9)
    )
    report = seed_demo(db, ONE_DAY)
    ensure_indexes(db)
    data_dir: Path = tmp_path_factory.mktemp("review-eval")
    return ReviewLab(db, report, load_settings(database={"data_dir": str(data_dir), "mongo_uri": None}))
