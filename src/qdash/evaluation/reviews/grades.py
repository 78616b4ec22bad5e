"""How well "needs a human" (a stored ``FAIL`` or ``REVIEW``) matches the demo's known-bad results.

Why apart from the runners: the same grading serves the guards alone (``visible``), a scripted
reviewer (``scripted``), a configured model (``live``), a replay, the tests and ``bench/reviews.py``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from qdash.evaluation.oracle.reviews import BAD_KINDS, HEALTHY, ResultTruth
from qdash.evaluation.results import Mode

NEEDS_HUMAN = ("REVIEW", "FAIL")


@dataclass(frozen=True)
class Grades:
    """Precision and recall of flagging (FAIL/REVIEW) against the known-bad results."""

    precision: float
    recall: float
    recall_by_kind: dict[str, tuple[int, int]]
    """kind → (caught, total)."""
    false_alarms: int
    healthy: int


def grade(flagged: Mapping[str, bool], truth: Mapping[str, str]) -> Grades:
    """Grade ``task_id → flagged`` against ``task_id → kind`` of the known-bad results; results absent
    from ``flagged`` were not reviewed and are left out of both sides."""
    bad = {task_id for task_id in truth if task_id in flagged}
    hits = {task_id for task_id, flag in flagged.items() if flag}
    kinds: dict[str, tuple[int, int]] = {}
    for task_id in bad:
        caught, total = kinds.get(truth[task_id], (0, 0))
        kinds[truth[task_id]] = (caught + (task_id in hits), total + 1)
    healthy = set(flagged) - bad
    return Grades(
        precision=len(hits & bad) / len(hits) if hits else 0.0,
        recall=len(hits & bad) / len(bad) if bad else 0.0,
        recall_by_kind=dict(sorted(kinds.items())),
        false_alarms=len(hits & healthy),
        healthy=len(healthy),
    )


class ReviewResult(BaseModel):
    """One result's review in one mode, beside its truth."""

    task_id: str
    name: str
    qid: str
    execution_id: str
    kind: str
    """The truth: a known-bad kind or ``healthy``."""
    mode: Mode
    decision: str | None = None
    """The stored decision (``visible``: the guards' floor; ``None`` = no guard fired)."""
    label: str | None = None
    source: str | None = None
    """``guards`` | ``model`` | ``fallback`` (who decided)."""
    tokens: int = 0
    """Model-reported tokens (``visible``: o200k tokens of the prompt a model would be sent)."""
    evidence: bool | None = None
    """``visible``, known-bad results: does what the model sees hold the evidence to call it bad?"""
    detail: str = ""
    error: str | None = None
    """The review failed (model unreachable, timeout): not graded."""

    @classmethod
    def of(cls, truth: ResultTruth, mode: Mode, **outcome: Any) -> ReviewResult:
        """The review of ``truth``'s result in ``mode``; ``outcome`` holds the fields after ``mode``."""
        return cls(
            task_id=truth.task_id,
            name=truth.name,
            qid=truth.qid,
            execution_id=truth.execution_id,
            kind=truth.kind,
            mode=mode,
            **outcome,
        )

    @property
    def flagged(self) -> bool:
        return self.decision in NEEDS_HUMAN

    @property
    def bad(self) -> bool:
        return self.kind != HEALTHY

    @property
    def missed(self) -> bool:
        return self.bad and self.error is None and not self.flagged


class KindRow(BaseModel):
    """One row of the report: a kind (or ``all``) with how many were flagged."""

    kind: str
    results: int
    flagged: int
    errors: int
    evidence: int | None = None
    """``visible``: known-bad results whose evidence the prompt shows (or the guards FAILed)."""


class ReviewScore(BaseModel):
    """The headline numbers of one graded run."""

    results: int
    graded: int
    errors: int
    precision: float
    recall: float
    false_alarms: int
    healthy: int
    false_alarm_rate: float
    rows: list[KindRow]
    model_reviews: int
    mean_tokens: float
    max_tokens: int
    evidence_share: float | None = None
    """``visible``: share of known-bad results a model could decide from what it is sent."""

    @classmethod
    def of(cls, results: list[ReviewResult]) -> ReviewScore:
        graded = [r for r in results if r.error is None]
        grades = grade({r.task_id: r.flagged for r in graded}, {r.task_id: r.kind for r in graded if r.bad})
        rows = [_row(kind, [r for r in results if r.kind == kind]) for kind in (*BAD_KINDS, HEALTHY)]
        rows = [row for row in rows if row.results] + [_row("all", results)]
        tokens = [r.tokens for r in results if r.tokens]
        bad = [r for r in results if r.bad]
        evidence = [r.evidence for r in bad if r.evidence is not None]
        return cls(
            results=len(results),
            graded=len(graded),
            errors=len(results) - len(graded),
            precision=grades.precision,
            recall=grades.recall,
            false_alarms=grades.false_alarms,
            healthy=grades.healthy,
            false_alarm_rate=grades.false_alarms / grades.healthy if grades.healthy else 0.0,
            rows=rows,
            model_reviews=len(tokens),
            mean_tokens=statistics.fmean(tokens) if tokens else 0.0,
            max_tokens=max(tokens, default=0),
            evidence_share=sum(evidence) / len(evidence) if evidence else None,
        )


def _row(kind: str, results: list[ReviewResult]) -> KindRow:
    evidence = [r.evidence for r in results if r.evidence is not None]
    return KindRow(
        kind=kind,
        results=len(results),
        flagged=sum(r.flagged for r in results if r.error is None),
        errors=sum(r.error is not None for r in results),
        evidence=sum(evidence) if evidence else None,
    )


OnReview = Callable[[ReviewResult], None]
"""Called after each graded result (the CLI's progress bar)."""
