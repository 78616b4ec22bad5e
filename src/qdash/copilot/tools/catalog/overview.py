"""Answer-first sections of the chip-wide tools: per-qubit tables, grades, ranked changes, extremes.

Why: stored tools used to show the model only list shapes (``{"_schema": [...], "_rows": 64}``) and
statistics, so "which qubits are bad" or "whose T1 is degrading" needed sandbox code. These
sections answer those questions in the tool output itself. They are plain dicts (never lists of
dicts), so the data-store summary keeps them as they are; the full rows stay in the store.
A per-qubit table is shown only while it fits ``tools.answer_table_chars``; above that the tools
show ranked extremes and grades instead, never statistics alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from qdash.copilot.scoring import Grade, classify, display_of, threshold_rule
from qdash.copilot.tools.catalog.formatting import iso, qid_sort_key, shown, sig4
from qdash.copilot.tools.jsonsafe import dumps
from qdash.settings import ScoreThreshold

EXTREMES = 5
RANKED_CHANGES = 5
GRADE_ORDER: tuple[Grade, ...] = ("bad", "fair", "good", "excellent")


def per_qubit_sections(
    name: str,
    values: Mapping[str, float],
    threshold: ScoreThreshold | None,
    table: tuple[list[str], list[list[Any]]],
    budget_chars: int,
    *,
    unit: str = "",
) -> dict[str, Any]:
    """The answer of a one-parameter chip-wide tool on parameter ``name``: ``table`` (cols, rows) and
    the qubits' grades while the table fits ``budget_chars``; above it the extremes and brief grades
    instead. ``values`` and the table are in the display unit; grades compare the stored values."""
    shown = fitting_table(*table, budget_chars)
    classes = None
    if threshold is not None:
        scale = display_of(name, threshold)[0]
        classes = grades({qid: value / scale for qid, value in values.items()}, threshold)
    sections: dict[str, Any] = {}
    if classes is not None and threshold is not None:
        sections["grades"] = classes if shown is not None else brief_grades(classes)
        sections["thresholds"] = threshold_rule(name, threshold)
    if shown is not None:
        sections["table"] = shown
    else:
        sections["extremes"] = extremes(values, unit=unit)
    return sections


def fitting_table(cols: list[str], rows: list[list[Any]], budget_chars: int) -> dict[str, Any] | None:
    """``{"cols", "rows"}`` when its JSON fits ``budget_chars``, else ``None``."""
    table = {"cols": cols, "rows": rows}
    return table if len(dumps(table)) <= budget_chars else None


def grades(values: Mapping[str, float], threshold: ScoreThreshold | None) -> dict[str, list[str]] | None:
    """Qubits by scoring class (stored units), worst class first; ``None`` without a threshold.

    Only classes that have members are listed, each in numeric qid order.
    """
    if threshold is None or not values:
        return None
    by_grade: dict[Grade, list[str]] = {grade: [] for grade in GRADE_ORDER}
    for qid in sorted(values, key=qid_sort_key):
        by_grade[classify(values[qid], threshold)].append(qid)
    return {grade: qids for grade, qids in by_grade.items() if qids}


def graded_parameters(
    values: Mapping[str, Mapping[str, float]], scoring: Mapping[str, ScoreThreshold]
) -> dict[str, Any]:
    """``grades`` and ``thresholds`` (the rule in display units) of every scored parameter of
    ``{parameter: {qid: value}}``; parameters without a threshold are left out."""
    classes = {
        name: found for name, per_qid in values.items() if (found := grades(per_qid, scoring.get(name)))
    }
    rules = {name: threshold_rule(name, scoring[name]) for name in classes}
    return {"grades": classes, "thresholds": rules}


def extremes_within(
    values: Mapping[str, Mapping[str, float]],
    first: Iterable[str],
    budget_chars: int,
    units: Mapping[str, str] | None = None,
) -> dict[str, dict[str, list[list[Any]]]]:
    """``extremes`` of each parameter, ``first`` ones (the scored) first, while they fit
    ``budget_chars`` (the rest are in the data store; their statistics still show min and max)."""
    order = [*dict.fromkeys(name for name in first if name in values), *sorted(values)]
    shown: dict[str, dict[str, list[list[Any]]]] = {}
    used = 0
    for name in dict.fromkeys(order):
        if not values[name]:
            continue
        ranked = extremes(values[name], unit=(units or {}).get(name, ""))
        used += len(dumps({name: ranked}))
        if used > budget_chars and shown:  # the first parameter is always ranked
            break
        shown[name] = ranked
    return shown


def brief_grades(classes: dict[str, list[str]]) -> dict[str, Any]:
    """Grades for a result over the table budget: names of bad and fair qubits, counts of the rest."""
    return {
        grade: qids if grade in ("bad", "fair") else {"count": len(qids)} for grade, qids in classes.items()
    }


def extremes(
    values: Mapping[str, float], count: int = EXTREMES, unit: str = ""
) -> dict[str, list[list[Any]]]:
    """The ``count`` lowest and highest ``[qid, value]`` pairs (display unit ``unit``, rounded by
    ``formatting.shown``), extreme first."""
    ordered = sorted(values.items(), key=lambda item: (item[1], qid_sort_key(item[0])))
    return {
        "lowest": [[qid, shown(value, unit)] for qid, value in ordered[:count]],
        "highest": [[qid, shown(value, unit)] for qid, value in ordered[::-1][:count]],
    }


def pct1(value: float | None) -> float | None:
    """A percentage to 0.1 (tables show a few hundred of them; digits cost tokens)."""
    return None if value is None else round(value, 1)


def ranked_changes(
    series: Mapping[str, Sequence[tuple[datetime | None, float]]], count: int = RANKED_CHANGES
) -> dict[str, Any]:
    """Largest drops and rises from each qubit's oldest to newest point in the window.

    ``series`` holds chronological ``(start_at, value)`` points per qid. The percentage is
    sign-aware (``(to − from) / |from| × 100``), as in :func:`stats.trend`; qubits with one point or
    a zero start are left out. Rows: ``[qid, from, to, change_pct, from_at, to_at]``.
    """
    changes: list[tuple[float, str, list[Any]]] = []
    for qid, points in series.items():
        if len(points) < 2 or points[0][1] == 0:
            continue
        (first_at, first), (last_at, last) = points[0], points[-1]
        pct = (last - first) / abs(first) * 100
        changes.append((pct, qid, [qid, sig4(first), sig4(last), pct1(pct), iso(first_at), iso(last_at)]))
    changes.sort(key=lambda item: (item[0], qid_sort_key(item[1])))
    return {
        "cols": ["qid", "from", "to", "change_pct", "from_at", "to_at"],
        "largest_drops": [row for pct, _, row in changes[:count] if pct < 0],
        "largest_rises": [row for pct, _, row in changes[::-1][:count] if pct > 0],
    }
