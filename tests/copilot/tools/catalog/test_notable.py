"""Notable changes on hand-built series: trends, dips and shifts are found, noise and single
outliers are not, and a thermal-cycle boundary is no trend (``catalog/notable.py``)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qdash.copilot.tools.catalog.cooldowns import newest_cycle
from qdash.copilot.tools.catalog.notable import (
    Point,
    chip_noise,
    kendall_tau,
    notable_in,
    notable_sections,
    theil_sen,
)

START = datetime(2026, 11, 10, 9, 0, tzinfo=UTC)
CHIP_NOISE = 0.15
"""Relative run-to-run noise of the hand-built chips (T1 scatters 10-20 % run to run)."""


def daily(values: Sequence[float], start: datetime = START) -> list[Point]:
    return [(start + timedelta(days=i), v) for i, v in enumerate(values)]


def noisy(level: float, n: int, seed: int, sigma: float = CHIP_NOISE) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.gauss(0, sigma)) for _ in range(n)]


def test_theil_sen_and_kendall_on_exact_lines() -> None:
    slope, start = theil_sen(daily([10.0, 8.0, 6.0, 4.0, 2.0]))
    assert slope == pytest.approx(-2.0) and start == pytest.approx(10.0)
    assert kendall_tau([1.0, 2.0, 3.0]) == 1.0 and kendall_tau([3.0, 2.0, 1.0]) == -1.0
    assert kendall_tau([1.0, 1.0]) == 0.0 and kendall_tau([5.0]) == 0.0


def test_a_steady_decline_is_a_trend_with_its_numbers() -> None:
    wobble = noisy(1.0, 10, seed=1, sigma=0.05)
    points = daily([(120 - 8 * i) * w for i, w in enumerate(wobble)])  # 120 → 48 over 9 days
    found = notable_in(points, CHIP_NOISE)
    assert found.trend is not None and not found.dips and found.shift is None
    assert found.trend.change == pytest.approx(-0.6, abs=0.1)
    assert found.trend.per_day == pytest.approx(-8, rel=0.25)
    assert found.trend.start_at == START and found.trend.points == 10


def test_a_decline_with_one_outlier_run_is_still_a_trend() -> None:
    values = [120.0 - 8 * i for i in range(10)]
    values[3] = 9.0  # one failed-looking fit does not break the trend nor make a dip
    found = notable_in(daily(values), CHIP_NOISE)
    assert found.trend is not None and found.trend.points == 9 and not found.dips


@pytest.mark.parametrize("seed", range(5))
def test_noisy_flat_series_are_not_notable(seed: int) -> None:
    assert not notable_in(daily(noisy(80.0, 10, seed)), CHIP_NOISE)


def test_white_noise_chips_list_almost_nothing() -> None:
    """False alarms per qubit on white noise (15 %, 8 runs) stay below 1 %."""
    rng = random.Random(7)
    series = [daily(noisy(rng.uniform(20, 150), 8, seed=rng.randrange(10**6))) for _ in range(1000)]
    floor = chip_noise(series)
    assert floor == pytest.approx(CHIP_NOISE, rel=0.3)
    flagged = sum(bool(notable_in(points, floor)) for points in series)
    assert flagged <= 10, flagged


def test_a_one_day_dip_that_recovered_is_found_with_dates() -> None:
    values = noisy(100.0, 10, seed=3, sigma=0.05)
    points = daily(values)
    dip_day = START + timedelta(days=6)
    points[6] = (dip_day, 12.0)
    points.insert(7, (dip_day + timedelta(hours=8), 15.0))  # a rerun the same day, still low
    found = notable_in(points, CHIP_NOISE)
    assert found.trend is None and found.shift is None
    [dip] = found.dips
    assert (dip.first_at, dip.last_at, dip.points, dip.recovered) == (
        dip_day,
        dip_day + timedelta(hours=8),
        2,
        True,
    )
    assert dip.low == pytest.approx(13.5) and dip.depth > 0.8


def test_a_dip_still_low_at_the_newest_run_is_not_recovered() -> None:
    values = [*noisy(100.0, 6, seed=4, sigma=0.05), 11.0, 13.0]
    [dip] = notable_in(daily(values), CHIP_NOISE).dips
    assert not dip.recovered and dip.points == 2


def test_a_dip_at_the_end_of_a_short_series_does_not_tilt_a_trend() -> None:
    """Four usual runs, then two low ones: a dip still low at the newest run, not a steep decline."""
    found = notable_in(daily([134.5, 117.4, 131.9, 148.0, 9.9, 13.1]), CHIP_NOISE)
    assert found.trend is None and found.shift is None
    [dip] = found.dips
    assert (dip.points, dip.recovered) == (2, False)


def test_a_single_low_run_is_an_outlier_not_a_dip() -> None:
    values = noisy(100.0, 10, seed=5, sigma=0.05)
    values[5] = 10.0
    assert not notable_in(daily(values), CHIP_NOISE)


def test_a_long_low_stretch_is_a_shift_not_a_dip() -> None:
    values = [*noisy(100.0, 5, seed=6, sigma=0.05), *noisy(40.0, 5, seed=7, sigma=0.05)]
    found = notable_in(daily(values), CHIP_NOISE)
    assert not found.dips and found.trend is None and found.shift is not None
    assert found.shift.change == pytest.approx(-0.6, abs=0.08)
    assert found.shift.at == START + timedelta(days=5)


def _run(day: int, cycle: str) -> dict[str, Any]:
    return {"start_at": START + timedelta(days=day), "cooldown_id": cycle}


def test_a_thermal_cycle_boundary_is_not_a_trend() -> None:
    """T1 is 120 μs in one cool-down and 60 μs in the next: the whole series steps down, the
    newest cycle (what the tool passes) is flat."""
    levels = [*noisy(120.0, 6, seed=8, sigma=0.05), *noisy(60.0, 6, seed=9, sigma=0.05)]
    runs = [(_run(i, "cd-1" if i < 6 else "cd-2"), v) for i, v in enumerate(levels)]
    whole = notable_in([(doc["start_at"], v) for doc, v in runs], CHIP_NOISE)
    assert whole  # across the boundary the step stands out …
    newest = [(doc["start_at"], v) for doc, v in newest_cycle(runs)]
    assert len(newest) == 6 and not notable_in(newest, CHIP_NOISE)  # … within the cycle nothing does


def test_sections_name_only_the_notable_qubits() -> None:
    series = {str(q): daily(noisy(90.0, 8, seed=q)) for q in range(12)}
    series["7"] = daily([130 - 12 * i for i in range(8)])
    sections = notable_sections(series)
    assert [row[0] for row in sections["trends"]["rows"]] == ["7"]
    assert sections["trends"]["cols"][:4] == ["qid", "from", "to", "change_pct"]
    assert sections["dips"]["rows"] == [] and sections["shifts"]["rows"] == []
    assert "Theil-Sen" in sections["rule"]


def test_short_series_and_zero_levels_are_never_notable() -> None:
    assert not notable_in(daily([100.0, 10.0]), CHIP_NOISE)
    assert not notable_in([], CHIP_NOISE)
    zero_level = daily([0.0, 0.0, 0.0, -5.0, -5.0, 0.0, 0.0])
    assert not notable_in(zero_level, CHIP_NOISE).dips  # no level to be 30 % below
