"""One result's review outcome: guards and (optionally) the model's verdict joined into the final verdict.

Why separate from the reviewer: the rule "guards first, a guard hit bounds the model, a FAIL hit
needs no model at all" is the heart of the feature and must hold for every path (single review,
bulk job, replay, benchmark), so it lives in one pure function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from qdash.models.ai_review import Verdict
from qdash.review.decision import bound_by_guards
from qdash.review.guards import GuardReport

Source = Literal["guards", "model", "fallback"]
"""Who decided: the guards alone, the model (bounded by guards), or the safe fallback for an
unusable model verdict (bounded by guards too)."""

_GUARD_ACTION = {
    "FAIL": "Re-run the task after checking its prerequisites; do not use these values.",
    "REVIEW": "Open the figure and compare with the qubit's history before using these values.",
}


def guard_verdict(report: GuardReport) -> Verdict | None:
    """The verdict the guards alone give, or ``None`` when none fired (only a model can accept)."""
    floor, label = report.floor, report.label
    if floor is None or label is None:
        return None
    questioned = report.questioned
    return Verdict(
        decision=floor,
        label=label,
        accepted_parameters=[name for name in report.outputs if name not in questioned],
        questioned_parameters=questioned,
        reason=report.reason,
        closest_knowledge_case="none",
        suggested_labels=sorted({hit.code for hit in report.hits}),
        recommended_action=_GUARD_ACTION[floor],
        note="",
    )


def needs_model(report: GuardReport) -> bool:
    """A FAIL from the guards is final: asking a model could not make it better, only cost tokens."""
    return report.floor != "FAIL"


@dataclass(frozen=True)
class Outcome:
    """The final verdict of one result and how it was reached."""

    verdict: Verdict
    source: Source
    guards: GuardReport
    usage: dict[str, Any] = field(default_factory=dict)
    prompt: dict[str, Any] = field(default_factory=dict)
    """What the model was sent (``ReviewPrompt.record``); empty when the guards decided alone."""

    def guard_dicts(self) -> list[dict[str, str]]:
        return [
            {
                "code": h.code,
                "decision": h.decision,
                "label": h.label,
                "parameter": h.parameter,
                "reason": h.reason,
            }
            for h in self.guards.hits
        ]


def combine(
    report: GuardReport,
    model_verdict: Verdict | None,
    source: Source,
    usage: dict[str, Any] | None = None,
    prompt: dict[str, Any] | None = None,
) -> Outcome:
    """The model's verdict bounded by the guards; without one, the guards' own verdict."""
    if model_verdict is None:
        verdict = guard_verdict(report)
        if verdict is None:
            raise ValueError("no guard fired and no model verdict: nothing decides this result")
        return Outcome(verdict, "guards", report, usage or {})
    bounded = bound_by_guards(model_verdict, report.floor, report.label, report.questioned)
    if report.hits and report.reason not in bounded.reason:
        bounded = bounded.model_copy(update={"note": f"{report.reason} {bounded.note}".strip()})
    return Outcome(bounded, source, report, usage or {}, prompt or {})
