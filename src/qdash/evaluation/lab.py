"""The lab an evaluation runs against: a seeded database, its seed report, settings and the oracle.

Why the seed report: the demo generator records its stories (which qubit has the TLS dip and
when, which execution was aborted); the oracle reads them from it, so an evaluation needs a lab
seeded by ``seed_demo`` (``EvalLab.seed`` builds one; the test suite passes its ``demo_lab``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pymongo.database import Database

from qdash.demo import DemoSpec, SeedReport, seed_demo
from qdash.evaluation.oracle import DEFAULT_PROJECT, Oracle
from qdash.settings import DatabaseSettings, Settings

DEFAULT_USER = "alice"


def seed_in_memory(name: str, spec: DemoSpec) -> tuple[Database[dict[str, Any]], SeedReport]:
    """A fresh in-memory database ``name`` seeded with ``spec``: the operator's database is never
    touched, and nothing is written to disk. Indexed as ``qdash serve`` indexes its store at start-up
    (the embedded store then answers equality queries from its maps instead of scanning every run)."""
    from qdash.db import open_database
    from qdash.db.indexes import ensure_indexes

    db = open_database(DatabaseSettings(name=name, embedded_persist=False, embedded_warn_documents=10**9))
    ensure_indexes(db)
    return db, seed_demo(db, spec)


@dataclass
class SeededLab:
    """A seeded database, the generator's record of it, the settings, and whose data is read."""

    db: Database[dict[str, Any]]
    report: SeedReport
    settings: Settings
    project_id: str = DEFAULT_PROJECT
    username: str = DEFAULT_USER


@dataclass
class EvalLab(SeededLab):
    oracle: Oracle = field(init=False)

    def __post_init__(self) -> None:
        if not self.settings.tools.investigation:  # the question set grades the investigation tools too
            tools = self.settings.tools.model_copy(update={"investigation": True})
            self.settings = self.settings.model_copy(update={"tools": tools})
        self.oracle = Oracle(self.db, self.report, self.settings, self.project_id)

    @classmethod
    def seed(
        cls, settings: Settings, spec: DemoSpec | None = None, end_at: datetime | None = None
    ) -> EvalLab:
        """A fresh in-memory lab (``DemoSpec.small`` by default): what CI and the bench evaluate."""
        return cls(*seed_in_memory("qdash_eval", spec or DemoSpec.small(end_at=end_at)), settings)
