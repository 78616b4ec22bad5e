"""Threshold classification and prompt rendering, both directions, boundaries included."""

from __future__ import annotations

import pytest

from qdash.copilot.scoring import assessment_for, classify, render_threshold_line
from qdash.settings import ScoreThreshold

T1 = ScoreThreshold(unit="μs", bad=20, good=50, excellent=100)
ANHARM = ScoreThreshold(unit="GHz", bad=-0.25, good=-0.28, excellent=-0.32, higher_is_better=False)
ANHARM_MHZ = ScoreThreshold(
    unit="MHz", bad=-250, good=-280, excellent=-320, higher_is_better=False, scale=1000, stored_unit="GHz"
)


@pytest.mark.parametrize(
    ("value", "grade"),
    [
        (150, "excellent"),
        (100, "excellent"),
        (99.9, "good"),
        (50, "good"),
        (49, "fair"),
        (20, "fair"),
        (19.9, "bad"),
    ],
)
def test_higher_is_better(value: float, grade: str) -> None:
    assert classify(value, T1) == grade


@pytest.mark.parametrize(
    ("value", "grade"),
    [
        (-0.35, "excellent"),
        (-0.32, "excellent"),
        (-0.30, "good"),
        (-0.28, "good"),
        (-0.26, "fair"),
        (-0.25, "fair"),
        (-0.24, "bad"),
    ],
)
def test_lower_is_better(value: float, grade: str) -> None:
    assert classify(value, ANHARM) == grade
    assert classify(value, ANHARM_MHZ) == grade


def test_assessment_mapping() -> None:
    assert [assessment_for(g) for g in ("excellent", "good", "fair", "bad")] == [
        "good",
        "good",
        "warning",
        "bad",
    ]


def test_prompt_lines_match_the_documented_form() -> None:
    assert render_threshold_line(["t1"], T1) == "- t1 [μs]: excellent ≥ 100, good ≥ 50, bad < 20"


def test_prompt_lines_use_the_display_unit_whatever_unit_the_config_used() -> None:
    """The lines read in the unit every tool reports (qdash.units), so the model compares like with like."""
    for entry in (ANHARM, ANHARM_MHZ):
        assert render_threshold_line(["anharmonicity"], entry) == (
            "- anharmonicity [MHz]: excellent ≤ -320, good ≤ -280, bad > -250"
        )
    fidelity = ScoreThreshold(unit="a.u.", bad=0.98, good=0.995, excellent=0.999)
    assert render_threshold_line(["x90_gate_fidelity"], fidelity) == (
        "- x90_gate_fidelity [%]: excellent ≥ 99.9, good ≥ 99.5, bad < 98"
    )


def test_bad_may_be_null() -> None:
    entry = ScoreThreshold(unit="GHz", good=4.5, excellent=5.0)
    assert classify(1.0, entry) == "fair"
    assert render_threshold_line(["f"], entry).endswith("excellent ≥ 5, good ≥ 4.5")


def test_identical_thresholds_share_one_line() -> None:
    from qdash.copilot.scoring import render_thresholds

    lines = render_thresholds({"t1": T1, "t1_average": T1, "anharmonicity": ANHARM}).splitlines()
    assert lines[0].startswith("- t1, t1_average [μs]")
    assert len(lines) == 2
