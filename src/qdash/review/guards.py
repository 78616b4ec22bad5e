"""Deterministic guards: the checks that run before any model and bound what it may decide.

Why rules before the model: a failed fit, a missing output, a value no physical qubit can have or a
value the lab's thresholds call bad is obvious from the document alone. Catching these without a
model is cheap, cannot hallucinate, and is the floor of the decision: a guard hit can never become
``PASS`` (``decision.bound_by_guards``). Limits come from task knowledge (``review:`` of
``task_knowledge.yaml``) and from the scoring thresholds (``scoring`` in ``copilot.yaml``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from qdash.copilot.prompts.knowledge import ResultLimits
from qdash.copilot.scoring import classify
from qdash.models.ai_review import Decision, Label
from qdash.review.decision import stricter
from qdash.settings import ScoreThreshold
from qdash.units import shown_unit

GUARD_PREFIX = "Deterministic safety guard"
"""Starts every guard reason; upstream's dashboard reads it (with ``no_signal``) as a missing output."""
R2_KEYS = ("r2", "r_squared", "fit_r2")
FINISHED = ("completed", "failed")


@dataclass(frozen=True)
class GuardHit:
    """One rule that fired: its code, the decision it forces, and the parameter it is about."""

    code: str
    decision: Decision
    label: Label
    reason: str
    parameter: str = ""


@dataclass(frozen=True)
class GuardReport:
    """Every hit on one result; empty when the result passed all guards."""

    hits: list[GuardHit] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    """The result's output parameter names (a hit without a parameter questions all of them)."""

    @property
    def floor(self) -> Decision | None:
        """The least severe decision still allowed, or ``None`` when nothing fired."""
        floor: Decision | None = None
        for hit in self.hits:
            floor = hit.decision if floor is None else stricter(floor, hit.decision)
        return floor

    @property
    def label(self) -> Label | None:
        """The label of the first hit of the most severe decision."""
        floor = self.floor
        return next((hit.label for hit in self.hits if hit.decision == floor), None)

    @property
    def questioned(self) -> list[str]:
        names: list[str] = []
        for hit in self.hits:
            names.extend([hit.parameter] if hit.parameter else self.outputs)
        return list(dict.fromkeys(names))

    @property
    def reason(self) -> str:
        """All hits in one sentence list, for the note and the guard-only verdict."""
        return f"{GUARD_PREFIX}: " + "; ".join(hit.reason for hit in self.hits) + "." if self.hits else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _status_hits(doc: Mapping[str, Any]) -> list[GuardHit]:
    status = str(doc.get("status") or "")
    message = str(doc.get("message") or "").strip()
    if status == "failed":
        label: Label = "NO_SIGNAL" if "signal" in message.lower() else "ANOMALY"
        said = f": {message}" if message else ""
        return [GuardHit("failed_fit", "FAIL", label, f"the task failed{said}")]
    if status not in FINISHED:
        return [
            GuardHit(
                "not_finished",
                "REVIEW",
                "NO_SIGNAL",
                f"the task is {status or 'without status'}, not finished",
            )
        ]
    return []


def _output_hits(doc: Mapping[str, Any], limits: ResultLimits) -> list[GuardHit]:
    outputs = doc.get("output_parameters") or {}
    hits = [
        GuardHit("missing_output", "FAIL", "NO_SIGNAL", f"no {name} output parameter", name)
        for name in limits.outputs
        if name not in outputs and doc.get("status") == "completed"
    ]
    names = doc.get("output_parameter_names")
    if isinstance(names, list) and sorted(map(str, names)) != sorted(outputs):
        hits.append(
            GuardHit(
                "names_mismatch",
                "REVIEW",
                "ANOMALY",
                f"output_parameter_names {sorted(map(str, names))} differ from the outputs {sorted(outputs)}",
            )
        )
    return hits


def _value_hits(
    name: str, param: Any, limits: ResultLimits, scoring: Mapping[str, ScoreThreshold]
) -> Iterable[GuardHit]:
    raw = param.get("value") if isinstance(param, dict) else param
    value = _number(raw)
    # the reason speaks the display unit of every tool (fidelity 95.83 %, not 0.9583 a.u.)
    scale, unit = shown_unit(name, param.get("unit") if isinstance(param, dict) else "")
    number = f"{value * scale:g}" if scale != 1 and value is not None and math.isfinite(value) else repr(raw)
    shown = f"{name} = {number}{' ' + unit if unit else ''}"
    if value is None or not math.isfinite(value):
        yield GuardHit("not_finite", "FAIL", "ANOMALY", f"{shown} is not a finite number", name)
        return
    bounds = limits.bounds.get(name)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        yield GuardHit(
            "out_of_bounds",
            "FAIL",
            "ANOMALY",
            f"{shown} is outside the physical range {bounds[0] * scale:g}…{bounds[1] * scale:g}",
            name,
        )
        return
    error = _number(param.get("error")) if isinstance(param, dict) else None
    if error is not None and (not math.isfinite(error) or error < 0):
        yield GuardHit("bad_error", "REVIEW", "SUSPICIOUS", f"{name} has an invalid error {error!r}", name)
    elif (
        error
        and limits.max_relative_error is not None
        and value
        and abs(error / value) > limits.max_relative_error
    ):
        yield GuardHit(
            "error_too_large",
            "REVIEW",
            "SUSPICIOUS",
            f"{name} error is {abs(error / value):.0%} of the value (limit {limits.max_relative_error:.0%})",
            name,
        )
    threshold = scoring.get(name)
    if (
        threshold is not None
        and classify(value, threshold) == "bad"
        and (bad := threshold.stored(threshold.bad)) is not None
    ):
        side = "below" if threshold.higher_is_better else "above"
        yield GuardHit(
            "below_threshold",
            "REVIEW",
            "SUSPICIOUS",
            f"{shown} is {side} the bad threshold {bad * scale:g}",
            name,
        )


def _r2_hits(doc: Mapping[str, Any], limits: ResultLimits) -> list[GuardHit]:
    if limits.min_r2 is None:
        return []
    for source in (doc.get("output_parameters") or {}, doc.get("note") or {}):
        for key in R2_KEYS:
            entry = source.get(key) if isinstance(source, dict) else None
            r2 = _number(entry.get("value") if isinstance(entry, dict) else entry)
            if r2 is not None and r2 < limits.min_r2:
                return [
                    GuardHit(
                        "low_r2", "REVIEW", "SUSPICIOUS", f"fit R² {r2:.2f} is below {limits.min_r2:.2f}"
                    )
                ]
    return []


def run_guards(
    doc: Mapping[str, Any], limits: ResultLimits, scoring: Mapping[str, ScoreThreshold]
) -> GuardReport:
    """Every guard on one ``task_result_history`` document; pure (no I/O), so bulk runs and the
    benchmark call it on thousands of results."""
    outputs = doc.get("output_parameters") or {}
    hits = _status_hits(doc) + _output_hits(doc, limits)
    for name, param in outputs.items():
        if name in R2_KEYS:
            continue
        hits.extend(_value_hits(str(name), param, limits, scoring))
    hits.extend(_r2_hits(doc, limits))
    return GuardReport(hits, [str(name) for name in outputs])
