"""Comparisons shared by the evidence reader and the answer graders: ids, numbers, dates.

Both sides normalise the same way, so "Q05", "qubit 5" and ``"5"`` are one qubit and "2-16",
"16-2" and "Q16-Q02" one coupling, whatever format a tool or a model uses.
"""

from __future__ import annotations

import contextlib
import re
from datetime import date

from qdash.evaluation.questions import GraderSpec, IdKind

QID = re.compile(r"^(?:q|qubit\s*)?0*(\d{1,3})$", re.IGNORECASE)
COUPLING = re.compile(r"^q?0*(\d{1,3})\s*[-–_]\s*q?0*(\d{1,3})$", re.IGNORECASE)
EXECUTION = re.compile(r"\b(\d{8}-\d{3})\b")
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
COMPACT_DATE = re.compile(r"\b(20\d{2})(\d{2})(\d{2})(?:-\d{3})?\b")
MONTH_DAY = re.compile(r"(?<![\d-])(\d{2})[-/](\d{2})(?:\s+\d{2}:\d{2})")
"""Compacted tool timestamps ``11-22 15:03`` (year implied)."""
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
NAMED_DATE = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+)?("
    + "|".join(MONTHS)
    + r")[a-z]*\.?(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?"
    r"(?:,?\s+(\d{4}))?",
    re.IGNORECASE,
)
UNIT_FACTORS: dict[str, dict[str, float]] = {
    "μs": {"μs": 1.0, "µs": 1.0, "us": 1.0, "ns": 1e-3, "ms": 1e3, "s": 1e6},
    "GHz": {"GHz": 1.0, "MHz": 1e-3, "kHz": 1e-6},
    "a.u.": {"%": 1e-2, "a.u.": 1.0},
    "": {"%": 1e-2},
}
"""Answer unit → factor to the truth's unit."""


def normalise_id(kind: IdKind, raw: str) -> str | None:
    """The canonical form of one id of ``kind``, or ``None`` when ``raw`` is not one."""
    text = raw.strip()
    if kind == "qid":
        match = QID.match(text)
        return str(int(match.group(1))) if match else None
    if kind == "coupling":
        match = COUPLING.match(text)
        if not match:
            return None
        a, b = sorted((int(match.group(1)), int(match.group(2))))
        return f"{a}-{b}"
    if kind == "execution":
        return text if EXECUTION.fullmatch(text) else None
    return text.lower() or None


def canonical(kind: IdKind, ids: list[str]) -> set[str]:
    """Truth ids in the form :func:`normalise_id` gives (couplings order-free)."""
    return {normalise_id(kind, i) or i.lower() for i in ids}


def within(value: float, truth: float, grader: GraderSpec) -> bool:
    """``value`` equals ``truth`` within the grader's absolute or relative tolerance."""
    tolerance = max(grader.abs_tol, grader.rel_tol * abs(truth))
    return abs(value - truth) <= tolerance + 1e-12


def dates_in(text: str, year: int) -> set[date]:
    """Every calendar date written in ``text`` (ISO, ``YYYYMMDD``, ``MM-DD hh:mm``, "Nov 22")."""
    found: set[date] = set()

    def add(y: int, m: int, d: int) -> None:
        with contextlib.suppress(ValueError):
            found.add(date(y, m, d))

    for y, m, d in ISO_DATE.findall(text):
        add(int(y), int(m), int(d))
    for y, m, d in COMPACT_DATE.findall(text):
        add(int(y), int(m), int(d))
    for m, d in MONTH_DAY.findall(text):
        add(year, int(m), int(d))
    for before, month, after, y in NAMED_DATE.findall(text):
        day = before or after
        if day:
            add(int(y) if y else year, MONTHS.index(month.lower()[:3]) + 1, int(day))
    return found
