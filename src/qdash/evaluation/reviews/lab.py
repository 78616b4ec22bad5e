"""The lab a review evaluation runs against: a seeded database, the generator's record, one chip.

Why not :class:`~qdash.evaluation.lab.EvalLab`: the question set's oracle needs every story of
``DemoSpec.small`` (two chips, another project); grading reviews needs only one chip's record, so a
test can seed a one-day lab and finish in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pymongo.database import Database

from qdash.demo import SeedReport
from qdash.evaluation.oracle import DEFAULT_PROJECT
from qdash.evaluation.oracle.raw import RawLab
from qdash.evaluation.oracle.reviews import ResultTruth, review_truth
from qdash.settings import Settings

DEFAULT_CHIP = "64Qv3"


@dataclass
class ReviewLab:
    db: Database[dict[str, Any]]
    report: SeedReport
    settings: Settings
    project_id: str = DEFAULT_PROJECT
    username: str = "alice"
    chip_id: str = DEFAULT_CHIP

    def truths(self) -> dict[str, ResultTruth]:
        """The oracle's truth of every finished result of the chip (plain pymongo, in start order)."""
        raw = RawLab(self.db, self.project_id, self.settings.config_dir, dict(self.settings.scoring))
        return review_truth(raw, self.report.chip(self.project_id, self.chip_id))
