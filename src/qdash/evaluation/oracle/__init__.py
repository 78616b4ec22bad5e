"""The independent oracle: ground truth from raw documents and the generator's record of its stories.

Rule (enforced by ``tests/test_architecture.py``): nothing here imports ``qdash.copilot`` or
``qdash.repositories``. Truth is recomputed from the database for every run, so it holds for any
seed and end date; nothing is hard-coded.
"""

from __future__ import annotations

from typing import Any

from pymongo.database import Database

from qdash.demo import SeedReport
from qdash.evaluation.oracle import (  # noqa: F401  (register their answers)
    cooldowns,
    counts,
    investigation,
    long_tail,
    review_notes,
    traps,
)
from qdash.evaluation.oracle.answers import ANSWERS, upload_table
from qdash.evaluation.oracle.facts import collect_facts
from qdash.evaluation.oracle.raw import RawLab
from qdash.evaluation.questions import Question, fill
from qdash.evaluation.truth import Truth
from qdash.settings import Settings

DEFAULT_PROJECT = "proj-demo"
OTHER_PROJECT = "proj-other"


class Oracle:
    """Facts and truths of one seeded lab, seen from ``project_id``."""

    def __init__(
        self,
        db: Database[dict[str, Any]],
        report: SeedReport,
        settings: Settings,
        project_id: str = DEFAULT_PROJECT,
        other_project: str = OTHER_PROJECT,
    ) -> None:
        self.raw = RawLab(db, project_id, settings.config_dir, dict(settings.scoring))
        self.report = report
        self.facts: dict[str, str] = collect_facts(self.raw, report, other_project)
        self._truths: dict[str, Truth] = {}

    @property
    def project_id(self) -> str:
        return self.raw.project_id

    def truth(self, question: Question) -> Truth:
        """The ground truth of ``question`` in this lab (computed once per question)."""
        if question.id not in self._truths:
            self._truths[question.id] = self._compute(question)
        return self._truths[question.id]

    def _compute(self, question: Question) -> Truth:
        spec = fill(dict(question.truth), self.facts)
        name = spec.pop("fn")
        func = ANSWERS.get(name)
        if func is None:
            raise ValueError(f"{question.id}: unknown oracle function {name!r}; known: {sorted(ANSWERS)}")
        return func(self.raw, self.report, **spec)

    def upload_csv(self, question: Question) -> bytes:
        """The table an ``uploaded_csv`` question's user has uploaded (from the raw documents)."""
        spec = fill(dict(question.truth), self.facts)
        return upload_table(self.raw, spec["chip"], spec["parameter"]).encode()


__all__ = ["Oracle"]
