"""Statistics and sign-aware trends."""

from __future__ import annotations

from qdash.copilot.tools.catalog.stats import summary, trend


def test_summary_rounds_to_four_figures_and_one_value_has_zero_stdev() -> None:
    assert summary([1.23456, 2.34567, 3.45678]) == {
        "count": 3,
        "mean": 2.346,
        "median": 2.346,
        "stdev": 1.111,
        "min": 1.235,
        "max": 3.457,
    }
    assert summary([5.0])["stdev"] == 0.0
    assert summary([])["count"] == 0


def test_trend_of_a_negative_quantity_follows_the_sign_of_the_change() -> None:
    # anharmonicity -0.30 → -0.33 GHz: the value went down by 10 %
    assert trend(-0.30, -0.33, 5) == ("down", -10.0)
    assert trend(-0.33, -0.30, 5) == ("up", 9.091)


def test_trend_thresholds_and_short_series() -> None:
    assert trend(100.0, 100.5, 3) == ("stable", 0.5)
    assert trend(100.0, 80.0, 3) == ("down", -20)
    assert trend(100.0, 80.0, 1) == (None, None)
    assert trend(0.0, 0.0, 2) == ("stable", None)
