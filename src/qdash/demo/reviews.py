"""AI reviews of the demo lab's newest results, so "which results did the AI review flag?" has answers.

What a lab that reviews its daily health check holds: the T1 and T2-echo results of each chip's
newest two 1Q executions carry a review in upstream QDash's fields (``ai_review_note``,
``ai_review``; ``qdash.models.ai_review`` writes both shapes, as ``qdash.review.store`` does), as
upstream's reviewer leaves them — no ``copilot_review`` documents, so ``qdash review run`` on the
demo still reviews everything itself. The verdicts follow the generator's stories, not the review
guards (the demo sits below the reviewer): a failed fit is ``FAIL``, a completed run on a known bad
qubit ``REVIEW``, a fit whose error is over :data:`LARGE_ERROR` of its value ``PASS_WITH_NOTE``, the
rest ``PASS``; the newest execution's T2-echo results on the chip's last :data:`PENDING_RESULTS`
qubits are still under review (``running``, no note). Times follow each result's end, so seeding
stays deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from qdash.demo.physics import SpecialQubits
from qdash.demo.spec import ChipPlan
from qdash.models.ai_review import Decision, Label, Verdict, ai_review_note, ai_review_state, render_note

REVIEWED_TASKS = ("CheckT1", "CheckT2Echo")
REVIEWED_EXECUTIONS = 2
PENDING_RESULTS = 3
LARGE_ERROR = 0.075
"""A fit error above this fraction of its value is passed with a note."""
REVIEW_DELAY = timedelta(minutes=20)
"""How long after a result's end its review is written."""
PROVIDER, MODEL = "demo", "demo-reviewer"


def _verdict(
    decision: Decision,
    label: Label,
    reason: str,
    action: str,
    *,
    accepted_parameters: Sequence[str] = (),
    questioned_parameters: Sequence[str] = (),
    suggested_labels: Sequence[str] = (),
    note: str = "",
) -> Verdict:
    """A verdict as the demo reviewer words it: no knowledge case, only the lists that apply."""
    return Verdict(
        decision=decision,
        label=label,
        accepted_parameters=list(accepted_parameters),
        questioned_parameters=list(questioned_parameters),
        reason=reason,
        closest_knowledge_case="none",
        suggested_labels=list(suggested_labels),
        recommended_action=action,
        note=note,
    )


def verdict(result: dict[str, Any], special: SpecialQubits) -> Verdict:
    """The demo reviewer's verdict on one finished result."""
    outputs: dict[str, Any] = result.get("output_parameters") or {}
    names = sorted(outputs) or [str(result["name"])]
    if result["status"] == "failed":
        return _verdict(
            "FAIL",
            "NO_SIGNAL",
            f"The fit failed: {result.get('message') or 'no message'}.",
            "Re-run the task after checking its prerequisites; do not use these values.",
            questioned_parameters=names,
            suggested_labels=("failed_fit",),
        )
    shown = ", ".join(
        f"{name} = {body['value']:.4g} {body.get('unit') or ''}".rstrip()
        for name, body in sorted(outputs.items())
    )
    if str(result["qid"]) in special.bad:
        return _verdict(
            "REVIEW",
            "SUSPICIOUS",
            f"{shown} is far below the chip's other qubits; this qubit has been weak for weeks.",
            "Compare with the qubit's history and its neighbours before using these values.",
            questioned_parameters=names,
            suggested_labels=("low_coherence",),
        )
    noisy = [
        name
        for name, body in sorted(outputs.items())
        if body.get("value")
        and abs(float(body.get("error") or 0.0)) > LARGE_ERROR * abs(float(body["value"]))
    ]
    if noisy:
        return _verdict(
            "PASS_WITH_NOTE",
            "CORRECT",
            f"The fit converged ({shown}); the error of {', '.join(noisy)} is over {LARGE_ERROR:.1%} of it.",
            "Use the values; re-measure if a tighter error matters.",
            accepted_parameters=names,
            suggested_labels=("large_error",),
            note="A wide error bar.",
        )
    return _verdict(
        "PASS",
        "CORRECT",
        f"Clean decay and a converged fit; {shown} is in line with this qubit's history.",
        "Use the values.",
        accepted_parameters=names,
    )


@dataclass(frozen=True)
class _Chip:
    special: SpecialQubits
    username: str
    executions: frozenset[str]
    newest: str
    pending_qids: frozenset[str]


class DemoReviewer:
    """Puts a review on each result it is shown that a lab's review job would have reached: called
    by the writer (``Sink``'s ``prepare``) on every document before it is buffered, so reviews cost
    no second write."""

    def __init__(self) -> None:
        self._chips: dict[tuple[str, str], _Chip] = {}

    def add_chip(
        self, plan: ChipPlan, special: SpecialQubits, one_q_executions: list[str], num_qubits: int
    ) -> None:
        """Review the chip's newest :data:`REVIEWED_EXECUTIONS` of ``one_q_executions`` (oldest first);
        the newest one's T2-echo results on the last :data:`PENDING_RESULTS` qubits stay pending."""
        newest = one_q_executions[-REVIEWED_EXECUTIONS:]
        if newest:
            pending = frozenset(str(q) for q in range(max(0, num_qubits - PENDING_RESULTS), num_qubits))
            chip = _Chip(special, plan.username, frozenset(newest), newest[-1], pending)
            self._chips[(plan.project_id, plan.chip_id)] = chip

    def __call__(self, collection: str, doc: dict[str, Any]) -> None:
        if collection != "task_result_history":
            return
        chip = self._chips.get((doc["project_id"], doc["chip_id"]))
        if chip is None or doc["execution_id"] not in chip.executions:
            return
        if doc["name"] not in REVIEWED_TASKS or doc["status"] not in ("completed", "failed"):
            return
        at = doc["end_at"] + REVIEW_DELAY
        in_flight = (doc["execution_id"], doc["name"]) == (chip.newest, REVIEWED_TASKS[-1])
        status = "running" if in_flight and doc["qid"] in chip.pending_qids else "completed"
        doc["ai_review"] = ai_review_state(
            status=status,
            at=at,
            requested_by=chip.username,
            run_id=f"demo-review-{doc['execution_id']}",
            trigger="manual_chip_bulk",
            provider=PROVIDER,
            model=MODEL,
        )
        if status == "completed":
            doc["ai_review_note"] = ai_review_note(render_note(verdict(doc, chip.special)), at)
