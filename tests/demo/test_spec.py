"""DemoSpec sizes and validation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from qdash.demo import ChipPlan, DemoSpec


def test_scales() -> None:
    default = DemoSpec.for_scale("default")
    assert [(c.project_id, c.chip_id, c.days) for c in default.chips] == [
        ("proj-demo", "64Qv3", 30),
        ("proj-demo", "144Qv2", 2),
        ("proj-other", "64Qv3", 3),
    ]
    lab = DemoSpec.for_scale("lab")
    assert [(c.topology_id, c.days) for c in lab.chips] == [("square-lattice-mux-144", 365)]
    with pytest.raises(ValueError, match="unknown scale 'huge'"):
        DemoSpec.for_scale("huge")


def test_with_days_sets_the_longest_chips_and_caps_the_others() -> None:
    spec = DemoSpec.default().with_days(7)
    assert [c.days for c in spec.chips] == [7, 2, 3]
    assert [c.days for c in DemoSpec.default().with_days(1).chips] == [1, 1, 1]
    with pytest.raises(ValueError, match="days must be"):
        DemoSpec.default().with_days(0)


def test_validate_names_the_problem() -> None:
    spec = DemoSpec.default()
    with pytest.raises(ValueError, match="unknown project proj-nope"):
        replace(spec, chips=(ChipPlan("proj-nope", "c", "linear-16", "u", 1, 1),)).validate()
    with pytest.raises(ValueError, match="appears twice"):
        replace(spec, chips=(spec.chips[0], spec.chips[0])).validate()
    with pytest.raises(ValueError, match="chips is empty"):
        replace(spec, chips=()).validate()
