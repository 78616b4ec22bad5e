"""Scoring thresholds (config ``scoring``): classify a stored value and render the prompt lines
(in display units, like every tool result).

Why here and not in the prompt text: the inequalities depend on the direction, and upstream got
them wrong for lower-is-better metrics. One function decides the class; the prompt and any tool
that reports a class use it, so they cannot disagree.
"""

from __future__ import annotations

from typing import Literal

from qdash.settings import ScoreThreshold
from qdash.units import shown_unit

Grade = Literal["excellent", "good", "fair", "bad"]
Assessment = Literal["good", "warning", "bad"]

_ASSESSMENT: dict[Grade, Assessment] = {"excellent": "good", "good": "good", "fair": "warning", "bad": "bad"}


def classify(value: float, threshold: ScoreThreshold) -> Grade:
    """Grade a value in stored units; a value on a boundary belongs to the better class."""
    excellent, good, bad = threshold.bounds()
    if threshold.higher_is_better:
        if value >= excellent:
            return "excellent"
        if value >= good:
            return "good"
        return "bad" if bad is not None and value < bad else "fair"
    if value <= excellent:
        return "excellent"
    if value <= good:
        return "good"
    return "bad" if bad is not None and value > bad else "fair"


def assessment_for(grade: Grade) -> Assessment:
    """Map a grade onto the answer's assessment badge."""
    return _ASSESSMENT[grade]


def _number(value: float) -> str:
    return f"{value:g}"


def display_of(name: str, threshold: ScoreThreshold) -> tuple[float, str]:
    """``(scale, unit)`` of parameter ``name``'s display unit (the one table of ``qdash.units``)."""
    return shown_unit(name, threshold.stored_unit if threshold.scale is not None else threshold.unit)


def threshold_rule(name: str, threshold: ScoreThreshold) -> str:
    """The classes as inequalities in the display unit of ``name`` (the unit every tool reports),
    e.g. ``excellent ≥ 100, good ≥ 50, bad < 20`` (``≤``/``>`` when lower is better); fair is what
    lies between good and bad."""
    scale = display_of(name, threshold)[0]
    excellent, good, bad = threshold.bounds()
    better, worse = ("≥", "<") if threshold.higher_is_better else ("≤", ">")
    parts = [f"excellent {better} {_number(excellent * scale)}", f"good {better} {_number(good * scale)}"]
    if bad is not None:
        parts.append(f"bad {worse} {_number(bad * scale)}")
    return ", ".join(parts)


def render_threshold_line(names: list[str], threshold: ScoreThreshold) -> str:
    """One prompt line in display units, e.g. ``- t1 [μs]: excellent ≥ 100, good ≥ 50, bad < 20``; the
    inequalities carry the direction (``≤``/``>`` for lower is better)."""
    unit = display_of(names[0], threshold)[1] or "a.u."
    return f"- {', '.join(names)} [{unit}]: {threshold_rule(names[0], threshold)}"


def render_thresholds(scoring: dict[str, ScoreThreshold]) -> str:
    """All threshold lines in config order (stable, so the prompt prefix stays cacheable); metrics
    with identical thresholds share one line (``t1, t1_average``) to save prompt tokens."""
    names_by_entry: dict[tuple[ScoreThreshold, tuple[float, str]], list[str]] = {}
    for name, entry in scoring.items():
        names_by_entry.setdefault((entry, display_of(name, entry)), []).append(name)
    return "\n".join(render_threshold_line(names, entry) for (entry, _), names in names_by_entry.items())
