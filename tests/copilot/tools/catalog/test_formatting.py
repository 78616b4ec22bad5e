"""Compaction helpers: 4 significant figures, units, short timestamps, columns."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from qdash.copilot.tools.catalog.formatting import (
    TimeFormat,
    columnar,
    compact_parameter,
    iso,
    output_value,
    qid_sort_key,
    sig4,
)
from qdash.units import normalize_unit


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (45.23456789012, 45.23),
        (0.99951234, 0.9995),
        (-0.3123456, -0.3123),
        (7.98123456, 7.981),
        (45.0, 45),
        (12, 12),
        (0.0, 0),
        (123456.7, 123500),
        (math.nan, None),
        (math.inf, None),
        ("x", None),
        (True, None),
    ],
)
def test_sig4(value: object, expected: object) -> None:
    result = sig4(value)
    assert result == expected
    assert type(result) is type(expected)


def test_micro_sign_variants_become_greek_mu() -> None:
    assert normalize_unit("µs") == "μs"
    assert normalize_unit("us") == "μs"
    assert normalize_unit(None) == ""


def test_short_times_use_the_deployment_zone_and_add_the_year_when_needed() -> None:
    now = datetime(2026, 11, 22, tzinfo=UTC)
    moment = datetime(2026, 2, 27, 1, 42, tzinfo=UTC)
    assert TimeFormat("UTC", [moment], now=now)(moment) == "02-27 01:42"
    assert TimeFormat("Asia/Tokyo", [moment], now=now)(moment) == "02-27 10:42"
    old = datetime(2025, 12, 31, 23, 0, tzinfo=UTC)
    assert TimeFormat("UTC", [moment, old], now=now)(moment) == "2026-02-27 01:42"
    naive = datetime(2026, 2, 27, 1, 42)
    assert TimeFormat("UTC", [naive], now=now)(naive) == "02-27 01:42"
    assert iso(naive) == "2026-02-27T01:42:00+00:00"


def test_compact_parameter_keeps_value_unit_error_and_source() -> None:
    times = TimeFormat("UTC", now=datetime(2026, 3, 1, tzinfo=UTC))
    stored = {
        "value": 45.21678,
        "unit": "µs",
        "error": 1.3,
        "calibrated_at": datetime(2026, 2, 27, 1, 42, tzinfo=UTC),
        "execution_id": "20260227-001",
        "description": "T1 time",
        "task_id": "abc",
    }
    assert compact_parameter("t1", stored, times) == {
        "value": 45.22,
        "unit": "μs",
        "error": 1.3,
        "calibrated_at": "02-27 01:42",
        "execution_id": "20260227-001",
    }
    assert compact_parameter("t1", {**stored, "error": 0}, times, with_source=False) == {
        "value": 45.22,
        "unit": "μs",
    }


def test_compact_parameter_shows_the_display_unit_with_its_value() -> None:
    """A fraction in ``a.u.`` is shown as % (value and error scaled together); one already in %
    or a parameter without a display entry keeps its stored unit."""
    times = TimeFormat("UTC")
    fidelity = {"value": 0.95834, "unit": "a.u.", "error": 0.0012}
    assert compact_parameter("average_readout_fidelity", fidelity, times) == {
        "value": 95.83,
        "unit": "%",
        "error": 0.12,
    }
    assert compact_parameter("average_readout_fidelity", {"value": 95.8, "unit": "%"}, times) == {
        "value": 95.8,
        "unit": "%",
    }
    assert compact_parameter("rabi_amplitude", {"value": 0.5, "unit": "a.u."}, times)["unit"] == "a.u."


def test_columnar_drops_empty_columns_unless_kept() -> None:
    table = columnar(["a", "b", "c"], [[1, None, ""], [2, None, None]], keep=["c"])
    assert table == {"cols": ["a", "c"], "rows": [[1, ""], [2, None]]}


def test_output_value_and_qid_order() -> None:
    run = {"output_parameters": {"t1": {"value": 12.5}, "bad": {"value": math.nan}}}
    assert output_value(run, "t1") == 12.5
    assert output_value(run, "bad") is None
    assert output_value(run, "t2_echo") is None
    assert sorted(["10", "2", "0-10", "0-2"], key=qid_sort_key) == ["0-2", "0-10", "2", "10"]
