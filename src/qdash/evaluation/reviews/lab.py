"""The lab a review evaluation runs against: a seeded database, the generator's record, one chip.

Why not :class:`~qdash.evaluation.lab.EvalLab`: the question set's oracle needs every story of
``DemoSpec.small`` (two chips, another project); grading reviews needs only one chip's record, so a
test can seed a one-day lab and finish in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from qdash.demo import DemoSpec
from qdash.evaluation.lab import SeededLab, seed_in_memory
from qdash.evaluation.oracle.raw import RawLab
from qdash.evaluation.oracle.reviews import BAD_KINDS, HEALTHY, ResultTruth, review_truth
from qdash.settings import Settings

DEFAULT_CHIP = "64Qv3"


@dataclass
class ReviewLab(SeededLab):
    chip_id: str = DEFAULT_CHIP

    def truths(self) -> dict[str, ResultTruth]:
        """The oracle's truth of every finished result of the chip (plain pymongo, in start order)."""
        raw = RawLab(self.db, self.project_id, self.settings.config_dir, dict(self.settings.scoring))
        return review_truth(raw, self.report.chip(self.project_id, self.chip_id))


def choose(truths: list[ResultTruth], only: list[str], limit: int | None) -> list[ResultTruth]:
    """The results to review: ``only`` keeps those whose kind, task name or execution id is listed;
    ``limit`` then takes that many round-robin over the kinds (each in start order), so a small
    sample still holds every kind. Unknown ``only`` entries are refused with what exists."""
    if only:
        known = {t.kind for t in truths} | {t.name for t in truths} | {t.execution_id for t in truths}
        unknown = sorted(set(only) - known)
        if unknown:
            kinds = ", ".join((*BAD_KINDS, HEALTHY))
            raise ValueError(
                f"unknown {', '.join(unknown)}: use a kind ({kinds}), a task name or an execution id "
                "of the lab (`qdash eval --suite reviews --list` lists them)"
            )
        truths = [t for t in truths if {t.kind, t.name, t.execution_id} & set(only)]
    if limit is None or limit >= len(truths):
        return truths
    queues = [[t for t in truths if t.kind == kind] for kind in (*BAD_KINDS, HEALTHY)]
    picked: list[ResultTruth] = []
    while len(picked) < limit:
        for queue in queues:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    order = {t.task_id: n for n, t in enumerate(truths)}
    return sorted(picked, key=lambda t: order[t.task_id])


def seed_lab(settings: Settings, spec: DemoSpec, chip_id: str = DEFAULT_CHIP) -> ReviewLab:
    """A fresh in-memory demo lab without the demo's own AI reviews (they would be reviews this suite
    did not make): what ``qdash eval --suite reviews`` grades."""
    unreviewed = replace(spec, ai_reviews=False)
    return ReviewLab(*seed_in_memory("qdash_eval_reviews", unreviewed), settings, chip_id=chip_id)
