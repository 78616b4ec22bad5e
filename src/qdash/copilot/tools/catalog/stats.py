"""Summary statistics and sign-aware trends shared by the chip-wide tools and the heatmap."""

from __future__ import annotations

import statistics
from typing import Any

from qdash.copilot.tools.catalog.formatting import sig4

TREND_THRESHOLD_PCT = 1.0


def summary(values: list[float]) -> dict[str, Any]:
    """``{count, mean, median, stdev, min, max}`` at 4 s.f.; one value has stdev 0.0."""
    if not values:
        return {"count": 0, "mean": None, "median": None, "stdev": None, "min": None, "max": None}
    return {
        "count": len(values),
        "mean": sig4(statistics.fmean(values)),
        "median": sig4(statistics.median(values)),
        "stdev": sig4(statistics.stdev(values)) if len(values) > 1 else 0.0,
        "min": sig4(min(values)),
        "max": sig4(max(values)),
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
