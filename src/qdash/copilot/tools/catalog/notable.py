"""Notable changes of one parameter across the chip: steady trends, temporary dips, level shifts.

Why: "which qubits lost T1 this week?" is answered by naming the few qubits that changed, with the
numbers that show it, not by a 64-row table the model has to scan. The detection is generic robust
statistics on each qubit's own series (oldest first, one thermal cycle: the caller passes the
newest cool-down only, so a jump between cycles is never a trend).

Residual scatter is robust (1.4826 × median |residual|) and never below the chip's typical relative
noise × the level (:func:`chip_noise`, from each qubit's run-to-run differences): eight runs can
look quieter than the qubit is. Thresholds (module constants):

- **dip**: ≥ ``DIP_MIN_POINTS`` consecutive runs ≥ ``MIN_CHANGE`` and ≥ ``EXCURSION_SIGMAS``
  scatters (of the other runs) below the usual level (the median; the trend line when there is
  one), within ``DIP_MAX_DAYS``, after a usual run: one low run is an outlier, not a dip.
  ``recovered``: a usual run follows (else it is still low at the newest run). Found first, so a
  dip at the end of a short series does not tilt the trend line.
- **trend** (runs outside dips): a Theil–Sen line (median of pairwise slopes). Runs ≥
  ``EXCURSION_SIGMAS`` scatters and ≥ ``MIN_CHANGE`` off it are outliers; at most one in ten (at
  least one) may be, more is a dip or a step. A trend needs ≥ ``TREND_MIN_POINTS`` inliers over ≥
  ``TREND_MIN_DAYS``, one direction (Kendall's |τ| ≥ ``TREND_MIN_TAU``), and a fitted change ≥
  ``MIN_CHANGE`` of the fitted start and ≥ ``TREND_MIN_Z`` standard errors (σ·√(12(n−1)/(n(n+1)))
  for n runs).
- **shift**: the split into two stretches of ≥ ``SHIFT_MIN_POINTS`` runs (outliers left out) whose
  medians differ most; a shift when they differ by ≥ ``MIN_CHANGE`` of the earlier one and ≥
  ``SHIFT_MIN_Z`` standard errors. A step also tilts a line: when both pass, the shift is kept
  only if the runs scatter clearly less about it (< ``STEP_FITS_BETTER`` × the line's scatter).
- **apart**: a qubit whose median is ≥ ``APART_MIN_Z`` robust scatters from the chip's median of
  medians: consistently unlike the rest (a bad qubit's fidelity), not a change in time.

The z thresholds were set on simulated chips of white noise (10-20 % run to run, slow drift, 2 %
single outlier runs; no stories): about 0.4 of 62 such qubits listed per chip at six to twelve runs
each, while a 70 % steady decline is found ~90 % and a two-run dip to 5-15 % of the level ~87 %
of the time at eight runs. ``tests/copilot/tools/catalog/test_notable.py`` checks noise,
hand-built trends, dips, outliers, steps and a thermal-cycle boundary.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations, pairwise
from typing import Any

from qdash.copilot.tools.catalog.formatting import iso, qid_sort_key, sig4

MAD_TO_SIGMA = 1.4826
MIN_CHANGE = 0.3
EXCURSION_SIGMAS = 3.0
TREND_MIN_POINTS = 5
TREND_MIN_DAYS = 2.0
TREND_MIN_TAU = 0.6
TREND_MIN_Z = 4.5
DIP_MIN_POINTS = 2
DIP_MAX_DAYS = 3.0
SHIFT_MIN_POINTS = 3
SHIFT_MIN_Z = 5.0
APART_MIN_Z = 5.0
STEP_FITS_BETTER = 0.7
RULE = (
    f"trend: Theil-Sen line, Kendall |tau|>={TREND_MIN_TAU}, change>={MIN_CHANGE:.0%} and >="
    f"{TREND_MIN_Z:g} s.e.; dip: >={DIP_MIN_POINTS} runs in a row >={EXCURSION_SIGMAS:g} MAD and >="
    f"{MIN_CHANGE:.0%} below usual within {DIP_MAX_DAYS:g} days; shift: medians >={MIN_CHANGE:.0%} and "
    f">={SHIFT_MIN_Z:g} s.e. apart; apart: median >={APART_MIN_Z:g} MAD from the other qubits"
)
"""One line the model can quote when it explains why a qubit is listed."""

Point = tuple[datetime, float]
DAY_S = 86400.0


@dataclass(frozen=True)
class Trend:
    start: float
    end: float
    per_day: float
    start_at: datetime
    end_at: datetime
    points: int
    misfit: float
    """Robust scatter of the runs about the line (compared with a step's when both fit)."""

    @property
    def change(self) -> float:
        return (self.end - self.start) / abs(self.start)


@dataclass(frozen=True)
class Dip:
    usual: float
    low: float
    first_at: datetime
    last_at: datetime
    points: int
    recovered: bool

    @property
    def depth(self) -> float:
        return (self.usual - self.low) / abs(self.usual)


@dataclass(frozen=True)
class Shift:
    before: float
    after: float
    at: datetime
    misfit: float

    @property
    def change(self) -> float:
        return (self.after - self.before) / abs(self.before)


def _days(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds() / DAY_S


def scatter(residuals: Sequence[float], level: float, floor: float) -> float:
    """Robust σ of residuals around a level: 1.4826 × their median absolute value, but never below
    ``floor`` × |level| (the chip's typical relative noise: a few runs can look quieter than the
    qubit is, and a short series would then call noise significant)."""
    own = MAD_TO_SIGMA * statistics.median(abs(r) for r in residuals) if residuals else 0.0
    return max(own, floor * abs(level))


def relative_noise(values: Sequence[float]) -> float | None:
    """Run-to-run noise of a series relative to its median level, from successive differences
    (1.4826 × MAD of the differences / √2: trends, steps and dips change only a few of them)."""
    diffs = [b - a for a, b in pairwise(values)]
    level = statistics.median(values) if values else 0.0
    if len(diffs) < 3 or level == 0:
        return None
    centre = statistics.median(diffs)
    return MAD_TO_SIGMA * statistics.median(abs(d - centre) for d in diffs) / math.sqrt(2) / abs(level)


def chip_noise(series: Iterable[Sequence[Point]]) -> float:
    """The chip's typical relative noise: the median of its qubits' (0 with no usable series)."""
    found = [n for points in series if (n := relative_noise([v for _, v in points])) is not None]
    return statistics.median(found) if found else 0.0


def theil_sen(points: Sequence[Point]) -> tuple[float, float]:
    """``(slope per day, value at the first point)`` of the Theil–Sen line."""
    origin = points[0][0]
    xs = [_days(origin, t) for t, _ in points]
    ys = [v for _, v in points]
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i]) for i, j in combinations(range(len(xs)), 2) if xs[j] != xs[i]]
    slope = statistics.median(slopes) if slopes else 0.0
    return slope, statistics.median(y - slope * x for x, y in zip(xs, ys, strict=True))


def kendall_tau(values: Sequence[float]) -> float:
    """Kendall's τ of the values against their order (ties count neither way)."""
    pairs = len(values) * (len(values) - 1) / 2
    if pairs == 0:
        return 0.0
    return sum((b > a) - (b < a) for a, b in combinations(values, 2)) / pairs


def excursions(values: Sequence[float], usual: Sequence[float], floor: float) -> list[bool]:
    """Runs ≥ ``EXCURSION_SIGMAS`` scatters and ≥ ``MIN_CHANGE`` of the level away from ``usual``."""
    sigma = scatter([v - u for v, u in zip(values, usual, strict=True)], statistics.median(usual), floor)
    return [
        abs(v - u) >= EXCURSION_SIGMAS * sigma and abs(v - u) >= MIN_CHANGE * abs(u)
        for v, u in zip(values, usual, strict=True)
    ]


def find_trend(points: Sequence[Point], floor: float) -> Trend | None:
    """A steady rise or decline of a chronological series, else ``None``. At most one run in ten
    (at least one) may be an excursion off the line: more is a dip or a step, not a trend."""
    if len(points) < TREND_MIN_POINTS:
        return None
    slope, start = theil_sen(points)
    origin = points[0][0]
    line = [start + slope * _days(origin, t) for t, _ in points]
    off = excursions([v for _, v in points], line, floor)
    if sum(off) > max(1, len(points) // 10):
        return None
    inliers = [p for p, away in zip(points, off, strict=True) if not away]
    n = len(inliers)
    if n < TREND_MIN_POINTS or _days(inliers[0][0], inliers[-1][0]) < TREND_MIN_DAYS:
        return None
    if abs(kendall_tau([v for _, v in inliers])) < TREND_MIN_TAU:
        return None
    slope, start = theil_sen(inliers)
    end = start + slope * _days(inliers[0][0], inliers[-1][0])
    residuals = [v - start - slope * _days(inliers[0][0], t) for t, v in inliers]
    sigma = scatter(residuals, (start + end) / 2, floor)
    error = sigma * math.sqrt(12 * (n - 1) / (n * (n + 1)))  # s.e. of the fitted change
    if start == 0 or abs(end - start) < max(MIN_CHANGE * abs(start), TREND_MIN_Z * error):
        return None
    return Trend(start, end, slope, inliers[0][0], inliers[-1][0], n, scatter(residuals, 0.0, 0.0))


def find_dips(points: Sequence[Point], usual: Sequence[float], floor: float) -> list[tuple[int, int]]:
    """``[start, stop)`` index ranges of the dips below the ``usual`` level of each run.

    A candidate is a stretch of consecutive runs ≥ ``MIN_CHANGE`` below the usual level; each of its
    runs must also be ≥ ``EXCURSION_SIGMAS`` scatters below it, the scatter measured on the runs
    outside the stretch (a 2-run dip in 8 runs would otherwise inflate its own yardstick)."""
    values = [v for _, v in points]
    low = [u != 0 and v < u - MIN_CHANGE * abs(u) for v, u in zip(values, usual, strict=True)]
    dips: list[tuple[int, int]] = []
    i = 0
    while i < len(points):
        stop = i
        while stop < len(points) and low[stop]:
            stop += 1
        if stop == i:
            i += 1
            continue
        rest = [v - u for j, (v, u) in enumerate(zip(values, usual, strict=True)) if not i <= j < stop]
        sigma = scatter(rest, statistics.median(usual), floor)
        deep = all(
            u - v >= EXCURSION_SIGMAS * sigma for v, u in zip(values[i:stop], usual[i:stop], strict=True)
        )
        long_enough = stop - i >= DIP_MIN_POINTS
        if i > 0 and deep and long_enough and _days(points[i][0], points[stop - 1][0]) <= DIP_MAX_DAYS:
            dips.append((i, stop))
        i = stop
    return dips


def find_shift(points: Sequence[Point], floor: float) -> Shift | None:
    """The largest step between two stretches of a chronological series, if notable."""
    best: tuple[float, int, float, float] | None = None
    for split in range(SHIFT_MIN_POINTS, len(points) - SHIFT_MIN_POINTS + 1):
        before = statistics.median(v for _, v in points[:split])
        after = statistics.median(v for _, v in points[split:])
        if best is None or abs(after - before) > best[0]:
            best = (abs(after - before), split, before, after)
    if best is None or best[2] == 0:
        return None
    step, split, before, after = best
    residuals = [v - before for _, v in points[:split]] + [v - after for _, v in points[split:]]
    sigma = scatter(residuals, before, floor)
    error = sigma * math.sqrt(1 / split + 1 / (len(points) - split))
    if step < max(MIN_CHANGE * abs(before), SHIFT_MIN_Z * error):
        return None
    return Shift(before, after, points[split][0], scatter(residuals, 0.0, 0.0))


@dataclass
class Notable:
    """What stands out in one qubit's series; falsy when nothing does."""

    trend: Trend | None
    dips: list[Dip]
    shift: Shift | None

    def __bool__(self) -> bool:
        return bool(self.dips) or self.trend is not None or self.shift is not None


def notable_in(points: Sequence[Point], floor: float = 0.0) -> Notable:
    """Dips below the median first: their runs are left out of the trend fit (a dip at the end of
    a short series would otherwise tilt the line); with a trend, dips are measured below its line
    instead. Then a level shift among the runs that are no excursion. A step also tilts a line, so
    when both pass, a shift is kept only when the runs scatter clearly less about it."""
    if len(points) < 3:
        return Notable(None, [], None)
    values = [v for _, v in points]
    flat = [statistics.median(values)] * len(points)
    ranges = find_dips(points, flat, floor)
    in_dip = {i for a, b in ranges for i in range(a, b)}
    trend = find_trend([p for i, p in enumerate(points) if i not in in_dip], floor)
    steady = [p for p, away in zip(points, excursions(values, flat, floor), strict=True) if not away]
    shift = find_shift(steady, floor)
    if trend is not None and shift is not None:
        trend, shift = (None, shift) if shift.misfit < STEP_FITS_BETTER * trend.misfit else (trend, None)
    usual = flat
    if trend is not None:
        usual = [trend.start + trend.per_day * _days(trend.start_at, t) for t, _ in points]
        ranges = find_dips(points, usual, floor)
    dips = [
        Dip(
            usual=statistics.median(usual[a:b]),
            low=statistics.median(values[a:b]),
            first_at=points[a][0],
            last_at=points[b - 1][0],
            points=b - a,
            recovered=b < len(points),
        )
        for a, b in ranges
    ]
    return Notable(trend, dips, shift)


def apart(series: Mapping[str, Sequence[Point]]) -> list[tuple[str, float, float, float]]:
    """Qubits whose typical value (median of their runs) is ≥ ``APART_MIN_Z`` robust scatters from
    the chip's median of medians: ``(qid, median, chip median, z)``, furthest first. Consistently
    unlike the rest of the chip (a bad qubit), not a change in time."""
    medians = {qid: statistics.median(v for _, v in points) for qid, points in series.items() if points}
    if len(medians) < 3:
        return []
    centre = statistics.median(medians.values())
    sigma = scatter([m - centre for m in medians.values()], 0.0, 0.0)
    if sigma == 0:
        return []
    found = [(qid, m, centre, (m - centre) / sigma) for qid, m in medians.items()]
    return sorted((row for row in found if abs(row[3]) >= APART_MIN_Z), key=lambda row: -abs(row[3]))


def notable_sections(series: Mapping[str, Sequence[Point]]) -> dict[str, Any]:
    """``{trends, dips, shifts, apart, rule}`` tables naming only the qubits where something stands out,
    largest change first."""
    floor = chip_noise(series.values())
    found = {qid: notable_in(series[qid], floor) for qid in sorted(series, key=qid_sort_key)}
    trends = [(q, t) for q, n in found.items() if (t := n.trend) is not None]
    dips = [(q, d) for q, n in found.items() for d in n.dips]
    shifts = [(q, s) for q, n in found.items() if (s := n.shift) is not None]
    trends.sort(key=lambda item: -abs(item[1].change))
    dips.sort(key=lambda item: -item[1].depth)
    shifts.sort(key=lambda item: -abs(item[1].change))
    return {
        "trends": {
            "cols": ["qid", "from", "to", "change_pct", "per_day", "from_at", "to_at", "n"],
            "rows": [
                [
                    q,
                    sig4(t.start),
                    sig4(t.end),
                    _pct(t.change),
                    sig4(t.per_day),
                    iso(t.start_at),
                    iso(t.end_at),
                    t.points,
                ]
                for q, t in trends
            ],
        },
        "dips": {
            "cols": ["qid", "usual", "low", "depth_pct", "from_at", "to_at", "n", "recovered"],
            "rows": [
                [
                    q,
                    sig4(d.usual),
                    sig4(d.low),
                    _pct(d.depth),
                    iso(d.first_at),
                    iso(d.last_at),
                    d.points,
                    d.recovered,
                ]
                for q, d in dips
            ],
        },
        "shifts": {
            "cols": ["qid", "before", "after", "change_pct", "at"],
            "rows": [[q, sig4(s.before), sig4(s.after), _pct(s.change), iso(s.at)] for q, s in shifts],
        },
        "apart": {
            "cols": ["qid", "median", "chip_median", "z"],
            "rows": [[q, sig4(m), sig4(c), round(z, 1)] for q, m, c, z in apart(series)],
        },
        "rule": RULE,
    }


def _pct(fraction: float) -> float:
    return round(100 * fraction, 1)
