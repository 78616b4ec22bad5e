"""Compact, unit-labelled, JSON-safe values for tool results.

Why here and not only in the compaction wrapper: the result shapes of docs/tools.md (``cp`` parameters,
columnar rows, short timestamps) are part of each tool's contract, and tests assert them on the
tool's own output. The wrapper's compaction is then a no-op on these results.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from qdash.copilot.scoring import classify
from qdash.copilot.tools.jsonsafe import Shown
from qdash.repositories.upstream_values import as_utc
from qdash.settings import ScoreThreshold
from qdash.units import shown_unit

Number = int | float


def sig(value: object, digits: int = 4) -> Number | None:
    """``digits`` significant figures; integral values as ``int``; NaN/±Inf/non-numbers → ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return value
    if not math.isfinite(value):
        return None
    if value == 0:
        return 0
    rounded = round(value, digits - 1 - math.floor(math.log10(abs(value))))
    return int(rounded) if float(rounded).is_integer() and abs(rounded) >= 1 else rounded


def sig4(value: object) -> Number | None:
    """4 significant figures (see :func:`sig`)."""
    return sig(value, 4)


FINE_UNITS = {"GHz": 6}
"""Display units shown with more than 4 significant figures: GHz to 6 (10 kHz, below a frequency
fit's typical error of tens of kHz), so neighbouring qubits (8.4795 vs 8.4804 GHz) never tie at 8.48."""


def shown(value: object, unit: str) -> Number | None:
    """A value in display unit ``unit`` rounded to the figures that rank neighbours (4, GHz 6);
    a float with more than 4 is a :class:`Shown`, which the compaction wrapper keeps as it is."""
    digits = FINE_UNITS.get(unit, 4)
    rounded = sig(value, digits)
    return Shown(rounded) if digits > 4 and isinstance(rounded, float) else rounded


def finite(value: object) -> float | None:
    """Full-precision float for stored results, ``None`` when not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def scaled(value: object, scale: float, unit: str = "") -> Number | None:
    """A stored value in its display unit ``unit`` (× ``scale`` from :func:`qdash.units.shown_unit`),
    rounded by :func:`shown`."""
    number = finite(value)
    return None if number is None else shown(number * scale, unit)


def iso(value: object) -> str | None:
    """Full ISO-8601 UTC timestamp for stored results (charts parse these)."""
    moment = as_utc(value)
    return None if moment is None else moment.astimezone(UTC).isoformat()


SHOWN_TIME = re.compile(r"^(\d{4}-)?\d{2}-\d{2} \d{2}:\d{2}$")
"""A time as :class:`TimeFormat` shows it: how the compaction step finds that an output shows times."""


class TimeFormat:
    """The one way a time is shown to the model, by every tool and by the compaction step: in the
    deployment timezone, ``MM-DD HH:MM`` when every time shown is from the current year,
    ``YYYY-MM-DD HH:MM`` otherwise (one format per result, so rows compare). The zone is named once
    per output, by the compaction step (``timezone``), not in every time."""

    def __init__(self, timezone: str, moments: Iterable[object] = (), now: datetime | None = None) -> None:
        self.zone: tzinfo = ZoneInfo(timezone)
        year = (now or datetime.now(UTC)).astimezone(self.zone).year
        local = [m.astimezone(self.zone) for m in map(as_utc, moments) if m is not None]
        self.pattern = "%m-%d %H:%M" if all(m.year == year for m in local) else "%Y-%m-%d %H:%M"

    def __call__(self, value: object) -> str | None:
        moment = as_utc(value)
        return None if moment is None else moment.astimezone(self.zone).strftime(self.pattern)


def compact_parameter(
    name: str,
    param: Mapping[str, Any],
    times: TimeFormat,
    with_source: bool = True,
    threshold: ScoreThreshold | None = None,
) -> dict[str, Any]:
    """A stored ParameterModel of parameter ``name`` → ``{value, unit, grade?, error?, calibrated_at?,
    execution_id?}`` in its display unit; ``grade`` (excellent/good/fair/bad) when the parameter has a
    scoring threshold (graded on the stored value)."""
    value = param.get("value")
    scale, unit = shown_unit(name, param.get("unit"))
    out: dict[str, Any] = {"value": scaled(value, scale, unit) if isinstance(value, int | float) else value}
    out["unit"] = unit
    if threshold is not None and (number := finite(value)) is not None:
        out["grade"] = classify(number, threshold)
    error = scaled(param.get("error"), scale)
    if error:
        out["error"] = error
    if with_source:
        if (calibrated := times(param.get("calibrated_at"))) is not None:
            out["calibrated_at"] = calibrated
        if param.get("execution_id"):
            out["execution_id"] = param["execution_id"]
    return out


def compact_parameters(
    params: Mapping[str, Any] | None,
    times: TimeFormat,
    names: Iterable[str] | None = None,
    with_source: bool = True,
    scoring: Mapping[str, ScoreThreshold] | None = None,
) -> dict[str, dict[str, Any]]:
    """``{name: ParameterModel}`` → ``{name: cp}``, sorted by name, optionally only ``names``,
    graded by ``scoring`` (the configured thresholds) where it has the parameter."""
    if not params:
        return {}
    wanted = set(names) if names is not None else None
    grading = scoring or {}
    return {
        name: compact_parameter(name, param, times, with_source, grading.get(name))
        for name, param in sorted(params.items())
        if isinstance(param, Mapping) and (wanted is None or name in wanted)
    }


def parameter_times(params: Mapping[str, Any] | None) -> list[object]:
    """Every ``calibrated_at`` in a parameter dict (to pick one time format for a result)."""
    if not params:
        return []
    return [p.get("calibrated_at") for p in params.values() if isinstance(p, Mapping)]


def qid_sort_key(qid: str) -> tuple[int, ...]:
    """Numeric order for qubit and coupling ids (``"2" < "10"``, ``"0-1" < "0-10"``)."""
    return tuple(int(part) if part.isdigit() else -1 for part in str(qid).split("-"))


def columnar(cols: list[str], rows: list[list[Any]], keep: Iterable[str] = ()) -> dict[str, Any]:
    """``{"cols", "rows"}`` without the columns that are empty in every row (except ``keep``)."""
    kept = set(keep)
    empty: tuple[Any, ...] = (None, "", [], {})
    used = [i for i, col in enumerate(cols) if col in kept or any(row[i] not in empty for row in rows)]
    return {"cols": [cols[i] for i in used], "rows": [[row[i] for i in used] for row in rows]}


def output_value(run: Mapping[str, Any], parameter_name: str) -> float | None:
    """The finite value of one output parameter of a task run, else ``None``."""
    body = (run.get("output_parameters") or {}).get(parameter_name) or {}
    return finite(body.get("value")) if isinstance(body, Mapping) else None
