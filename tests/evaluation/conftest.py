"""The evaluation's lab: the session's small demo lab with settings and the oracle (read-only)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qdash.demo import DemoLab
from qdash.evaluation import EvalLab, QuestionResult, load_questions, run_visible
from qdash.settings import load_settings


@pytest.fixture(scope="session")
def eval_lab(demo_lab: DemoLab, tmp_path_factory: pytest.TempPathFactory) -> EvalLab:
    data_dir: Path = tmp_path_factory.mktemp("eval-data")
    settings = load_settings(database={"data_dir": str(data_dir), "mongo_uri": None})
    return EvalLab(demo_lab.db, demo_lab.report, settings)


@pytest.fixture(scope="session")
def visible_results(eval_lab: EvalLab) -> dict[str, QuestionResult]:
    """One visible run of every question, shared by the tests that compare against it."""
    return {r.id: r for r in asyncio.run(run_visible(eval_lab, list(load_questions())))}
