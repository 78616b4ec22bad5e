"""Statistics and sign-aware trends."""

from __future__ import annotations

from qdash.copilot.tools.catalog.overview import extremes
from qdash.copilot.tools.catalog.stats import summary, trend


def test_summary_rounds_to_four_figures_and_one_value_has_zero_stdev() -> None:
    assert summary({"0": 1.23456, "1": 2.34567, "2": 3.45678}) == {
        "count": 3,
        "mean": 2.346,
        "median": 2.346,
        "stdev": 1.111,
        "min": ["0", 1.235],
        "max": ["2", 3.457],
    }
    assert summary({"0": 5.0})["stdev"] == 0.0
    assert summary({})["count"] == 0


def test_trend_of_a_negative_quantity_follows_the_sign_of_the_change() -> None:
    # anharmonicity -0.30 → -0.33 GHz: the value went down by 10 %
    assert trend(-0.30, -0.33, 5) == ("down", -10.0)
    assert trend(-0.33, -0.30, 5) == ("up", 9.091)


def test_trend_thresholds_and_short_series() -> None:
    assert trend(100.0, 100.5, 3) == ("stable", 0.5)
    assert trend(100.0, 80.0, 3) == ("down", -20)
    assert trend(100.0, 80.0, 1) == (None, None)
    assert trend(0.0, 0.0, 2) == ("stable", None)


def test_summary_names_the_qubits_at_the_extremes() -> None:
    stats = summary({"3": 41.0, "5": 38.5, "7": 44.25, "9": 38.5})
    assert (stats["min"], stats["max"]) == (["5", 38.5], ["7", 44.25])  # a tie names the lowest qid


def test_frequencies_keep_the_digits_that_rank_neighbours() -> None:
    """4 significant figures tie 8.4795 and 8.4804 GHz at 8.48; GHz values keep 6 (10 kHz)."""
    stats = summary({"1": 8.47951, "2": 8.48042, "3": 8.41}, unit="GHz")
    assert stats["max"] == ["2", 8.48042]
    assert extremes({"1": 8.47951, "2": 8.48042}, unit="GHz")["highest"] == [["2", 8.48042], ["1", 8.47951]]
    assert summary({"1": 45.2167, "2": 45.2149}, unit="μs")["max"] == ["1", 45.22]  # other units: 4
