"""One unit per parameter across every tool and the heatmap chart, on the demo lab.

Why: readout fidelity was "%" in the heatmap and "0.9583 a.u." in the qubit table; the model then
quoted two scales for one quantity. Every tool now reads ``qdash.units``: a value and its unit are
converted together, so the same number appears with the same unit everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from qdash.copilot.analysis_context import compact_parameters
from qdash.copilot.tools.output import ToolResult
from qdash.demo.catalogue import TASKS
from qdash.units import shown_unit

from .conftest import Call

EXPECTED = {"average_readout_fidelity": "%", "x90_gate_fidelity": "%", "t1": "μs", "qubit_frequency": "GHz"}
QID = "16"


def _task_of(parameter: str) -> str:
    return next(name for name, task in TASKS.items() if any(o.name == parameter for o in task.outputs))


def _units_seen(call: Call, name: str) -> dict[str, str]:
    """Where each tool states the unit of ``name`` → that unit."""
    seen: dict[str, str] = {}
    seen["get_qubit_params"] = call("get_qubit_params", qid=QID)["params"][name]["unit"]
    seen["compare_qubits"] = call("compare_qubits", qids=[QID, "17"], param_names=[name])["units"][name]
    seen["get_chip_summary"] = call("get_chip_summary", param_names=[name])["statistics"][name]["unit"]
    chip_series = call("get_chip_parameter_timeseries", parameter_name=name, last_n=3)
    seen["get_chip_parameter_timeseries"] = chip_series["unit"]
    seen["get_parameter_timeseries"] = call("get_parameter_timeseries", parameter_name=name, qid=QID)["unit"]
    seen["get_parameter_lineage"] = call("get_parameter_lineage", parameter_name=name, qid=QID)["unit"]
    task = _task_of(name)
    seen["get_task_history"] = call("get_task_history", task_name=task, qid=QID, last_n=2)["units"][name]
    latest = call("get_latest_task_result", task_name=task, qid=QID)
    seen["get_latest_task_result"] = latest["output_parameters"][name]["unit"]
    return seen


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_tool_states_one_unit_per_parameter(call: Call, demo_lab: Any, name: str) -> None:
    seen = _units_seen(call, name)
    assert set(seen.values()) == {EXPECTED[name]}, seen


@pytest.mark.parametrize("name", ["average_readout_fidelity", "x90_gate_fidelity", "t1", "qubit_frequency"])
def test_heatmap_chart_and_table_use_the_same_unit_and_numbers(
    call: Call, call_result: Callable[..., ToolResult], demo_lab: Any, name: str
) -> None:
    full = call_result("generate_chip_heatmap", metric_name=name)
    heatmap = full.data
    assert heatmap["unit"] == heatmap["statistics"]["unit"] == EXPECTED[name]
    [chart] = full.charts
    assert chart["data"][0]["colorbar"]["title"]["text"] == EXPECTED[name]
    assert f"[{EXPECTED[name]}]" in chart["layout"]["title"]["text"]
    params = call("get_qubit_params", qid=QID)["params"][name]
    row = dict(map(tuple, heatmap["table"]["rows"]))[QID]
    assert row == params["value"]  # the same number, not a scaled one beside a stored one


def test_fidelity_is_a_percentage_and_grades_still_use_stored_thresholds(call: Call, demo_lab: Any) -> None:
    shown = call("get_qubit_params", qid=QID)["params"]["average_readout_fidelity"]
    assert 50 < shown["value"] <= 100 and shown["grade"] in {"excellent", "good", "fair", "bad"}
    assert shown_unit("average_readout_fidelity", "%") == (1.0, "%")  # a lab storing % is not scaled twice


def test_the_analysis_context_shows_a_run_s_outputs_in_the_display_unit() -> None:
    stored = {
        "average_readout_fidelity": {"value": 0.9583, "unit": "a.u.", "error": 0.0016},
        "t1": {"value": 45.2, "unit": "μs"},
    }
    shown = compact_parameters(stored)
    assert shown["average_readout_fidelity"] == {
        "value": pytest.approx(95.83),
        "unit": "%",
        "error": pytest.approx(0.16),
    }
    assert shown["t1"] == {"value": 45.2, "unit": "μs"}
