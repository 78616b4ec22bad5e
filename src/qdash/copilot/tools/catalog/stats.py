"""Summary statistics and sign-aware trends shared by the chip-wide tools and the heatmap."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from qdash.copilot.tools.catalog.formatting import qid_sort_key, shown, sig4

TREND_THRESHOLD_PCT = 1.0


def summary(values: Mapping[str, float], unit: str = "") -> dict[str, Any]:
    """``{count, mean, median, stdev, min, max}`` of ``{qid: value}`` (display unit ``unit``,
    rounded by ``formatting.shown``), ``min`` and ``max`` as ``[qid, value]`` so an extreme is never
    nameless (a tie names the lowest qid); one value has stdev 0.0."""
    if not values:
        return {"count": 0, "mean": None, "median": None, "stdev": None, "min": None, "max": None}
    numbers = list(values.values())
    lowest = min(values, key=lambda qid: (values[qid], qid_sort_key(qid)))
    highest = min(values, key=lambda qid: (-values[qid], qid_sort_key(qid)))
    return {
        "count": len(numbers),
        "mean": shown(statistics.fmean(numbers), unit),
        "median": shown(statistics.median(numbers), unit),
        "stdev": shown(statistics.stdev(numbers), unit) if len(numbers) > 1 else 0.0,
        "min": [lowest, shown(values[lowest], unit)],
        "max": [highest, shown(values[highest], unit)],
    }


def trend(oldest: float, latest: float, points: int) -> tuple[str | None, float | None]:
    """``(trend, change_pct)`` with ``change_pct = (latest − oldest) / |oldest| × 100``.

    Dividing by ``|oldest|`` keeps the sign meaningful for negative quantities: anharmonicity going
    from -0.30 to -0.33 GHz is -10 % ("down"); upstream divided by ``oldest`` and called it "up".
    """
    if points < 2:
        return None, None
    if oldest == 0:
        change = None if latest == 0 else (100.0 if latest > 0 else -100.0)
    else:
        change = (latest - oldest) / abs(oldest) * 100
    value = change or 0.0
    label = "up" if value > TREND_THRESHOLD_PCT else "down" if value < -TREND_THRESHOLD_PCT else "stable"
    return label, sig4(change) if change is not None else None
