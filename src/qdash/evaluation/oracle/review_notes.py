"""Truth of the questions about AI reviews of task results, from the raw run documents.

Definitions (upstream QDash's, written here from its data model, not from the tools): a run's review
is its ``ai_review_note.content``, a markdown note whose ``- Decision: `X``` line holds the verdict
(PASS, PASS_WITH_NOTE, REVIEW or FAIL); "flagged" means REVIEW or FAIL (a person should look); a
review is pending while ``ai_review.status`` is ``requested`` or ``running``. A window is
``since <= start_at`` of the run; runs a person excluded are not counted.
"""

from __future__ import annotations

from collections import Counter

from qdash.demo import SeedReport
from qdash.evaluation.oracle.answers import answer
from qdash.evaluation.oracle.counts import window_runs
from qdash.evaluation.oracle.raw import FLAGGED, Doc, RawLab, review_field
from qdash.evaluation.oracle.raw import review_decision as decision
from qdash.evaluation.truth import Truth


def _flagged(raw: RawLab, chip: str, since: str) -> list[Doc]:
    return [run for run in window_runs(raw, chip, since, None) if decision(run) in FLAGGED]


@answer
def reviews_flagged_count(raw: RawLab, report: SeedReport, *, chip: str, since: str) -> Truth:
    """How many runs started since ``since`` the AI review flagged (REVIEW or FAIL)."""
    return Truth(kind="number", numbers=[len(_flagged(raw, chip, since))])


@answer
def reviews_flagged_top(raw: RawLab, report: SeedReport, *, chip: str, since: str) -> Truth:
    """The qubit(s) with the most flagged reviews among runs started since ``since``."""
    counts = Counter(str(run["qid"]) for run in _flagged(raw, chip, since))
    if not counts:
        raise LookupError(f"no flagged reviews on {chip} since {since}")
    most = max(counts.values())
    return Truth(kind="ids", ids=sorted(q for q, n in counts.items() if n == most), candidates=len(counts))


@answer
def review_of_latest(raw: RawLab, report: SeedReport, *, chip: str, qid: str, task: str) -> Truth:
    """The decision and suggested label of the review of ``task``'s newest completed run on ``qid``
    that nobody excluded."""
    runs = raw.runs(chip, {"qid": qid, "name": task, "status": "completed"})
    kept = [run for run in runs if run.get("excluded") is not True]
    if not kept:
        raise LookupError(f"no completed {task} on {qid}")
    verdict, label = decision(kept[-1]), review_field(kept[-1], "Human label suggestion")
    if verdict is None or label is None:
        raise LookupError(f"the newest {task} on {qid} has no review")
    return Truth(kind="text", texts=[verdict, label])


@answer
def reviews_pending(raw: RawLab, report: SeedReport, *, chip: str) -> Truth:
    """How many runs of the chip have a review requested and not finished."""
    runs = raw.runs(chip, {"ai_review.status": {"$in": ["requested", "running"]}})
    return Truth(kind="number", numbers=[sum(run.get("excluded") is not True for run in runs)])
