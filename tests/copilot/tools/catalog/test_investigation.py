"""The investigation tools on a hand-written lab whose answers are known: the last good run as the
baseline, excluded runs left out (and counted), ranking by classes lost, the calibration flow's
order, the project scope, and clear errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pymongo.database import Database

from qdash.copilot.tools.catalog.flow import load_flow
from qdash.copilot.tools.spec import ToolContext, ToolError
from qdash.settings import ConfigError, Settings

from .conftest import run_tool

CHIP = "64Qv3"
NOW = datetime.now(UTC).replace(microsecond=0)


def _run(
    task_id: str, name: str, qid: str, day: int, values: dict[str, float], **extra: Any
) -> dict[str, Any]:
    units = {"t1": "μs", "x90_gate_fidelity": "a.u.", "anharmonicity": "GHz"}
    return {
        "project_id": extra.pop("project_id", "proj-demo"),
        "chip_id": CHIP,
        "task_id": task_id,
        "_id": task_id,
        "name": name,
        "qid": qid,
        "task_type": "qubit",
        "status": "completed",
        "execution_id": f"2026010{day}-001",
        "start_at": NOW - timedelta(days=10 - day),
        "output_parameters": {p: {"value": v, "unit": units[p]} for p, v in values.items()},
        "output_parameter_names": list(values),
        **extra,
    }


def _current(task_id: str, value: float, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit, "task_id": task_id, "execution_id": "x", "calibrated_at": NOW}


@pytest.fixture
def lab(mongo_db: Database[dict[str, Any]], settings: Settings) -> ToolContext:
    db = mongo_db
    db.chip.insert_one({"project_id": "proj-demo", "chip_id": CHIP, "installed_at": NOW, "size": 64})
    db.task_result_history.insert_many(
        [
            _run("a0", "CheckT1", "0", 1, {"t1": 120.0}),
            _run("b0", "CheckT1", "0", 2, {"t1": 60.0}),
            _run("c0", "CheckT1", "0", 3, {"t1": 10.0}, excluded=True),
            _run("a1", "CheckT1", "1", 1, {"t1": 80.0}),
            _run("b1", "CheckT1", "1", 3, {"t1": 15.0}),
            _run("a2", "CheckT1", "2", 1, {"t1": 15.0}),
            _run("b2", "CheckT1", "2", 3, {"t1": 16.0}),
            _run("x1", "X90InterleavedRandomizedBenchmarking", "1", 3, {"x90_gate_fidelity": 0.95}),
            _run("s2", "CheckQubitSpectroscopy", "2", 1, {"anharmonicity": -0.2}),
            _run("o3", "CheckT1", "3", 3, {"t1": 5.0}, project_id="proj-other"),
        ]
    )
    db.qubit.insert_many(
        [
            {
                "project_id": "proj-demo",
                "chip_id": CHIP,
                "qid": "0",
                "data": {"t1": _current("c0", 10.0, "μs")},
            },
            {
                "project_id": "proj-demo",
                "chip_id": CHIP,
                "qid": "1",
                "data": {"t1": _current("b1", 15.0, "μs"), "x90_gate_fidelity": _current("x1", 0.95, "a.u.")},
            },
            {
                "project_id": "proj-demo",
                "chip_id": CHIP,
                "qid": "2",
                "data": {"t1": _current("b2", 16.0, "μs"), "anharmonicity": _current("s2", -0.2, "GHz")},
            },
            {
                "project_id": "proj-other",
                "chip_id": CHIP,
                "qid": "3",
                "data": {"t1": _current("o3", 5.0, "μs")},
            },
        ]
    )
    return ToolContext(db=db, project_id="proj-demo", username="alice", settings=settings)


def test_degradation_since_the_last_good_run_skips_excluded_runs(lab: ToolContext) -> None:
    report = run_tool(lab, "get_degradation_report", {"param_names": ["t1"]})
    rows = [(r["id"], r["from"], r["to"], r["from_grade"], r["to_grade"]) for r in report["degraded"]]
    # Q1 lost two classes (good → bad) and ranks first; Q0's latest kept run is 60 (10 was excluded):
    # excellent → good against its last good run (120); Q2 was never good, so it has no baseline.
    assert rows == [("1", 80.0, 15.0, "good", "bad"), ("0", 120.0, 60.0, "excellent", "good")]
    assert report["excluded"] == 1
    assert report["degraded_ids"] == {"qubits": ["1", "0"]}
    first = dict(zip(report["worst"]["cols"], report["worst"]["rows"][0], strict=True))
    assert first["change"] == -65 and first["change_pct"] == -81.2 and first["unit"] == "μs"
    assert (
        first["task"] == "CheckT1"
        and first["from_run"] == "20260101-001"
        and first["to_run"] == "20260103-001"
    )
    assert report["thresholds"] == {"t1": "excellent ≥ 100, good ≥ 50, bad < 20"}


def test_degradation_over_a_window_compares_with_its_oldest_run(lab: ToolContext) -> None:
    report = run_tool(lab, "get_degradation_report", {"within_days": 8, "param_names": ["t1"]})
    # Only the runs of days 3 onwards are inside: one run per qubit, so nothing to compare.
    assert report["degraded"] == [] and report["worst"]["total"] == 0
    wide = run_tool(lab, "get_degradation_report", {"within_days": 30, "param_names": ["t1"]})
    assert [r["id"] for r in wide["degraded"]] == ["1", "0"]


def test_recalibration_orders_tasks_by_the_flow_and_leaves_excluded_values_out(lab: ToolContext) -> None:
    result = run_tool(lab, "suggest_recalibration", {})
    assert result["steps"]["rows"] == [
        [1, "CheckQubitSpectroscopy", ["2"], [], ["anharmonicity"]],
        [2, "CheckT1", ["1", "2"], [], ["t1"]],
        [3, "X90InterleavedRandomizedBenchmarking", ["1"], [], ["x90_gate_fidelity"]],
    ]
    assert result["next"]["task"] == "CheckQubitSpectroscopy" and result["next"]["bad"] == ["2"]
    assert "anharmonicity bad on 1" in result["next"]["reason"] and "bad > -250" in result["next"]["reason"]
    assert result["excluded"] == 1  # Q0's current T1 (10 μs) came from an excluded run
    assert "3" not in {v["id"] for v in result["values"]}  # another project's qubit


def test_errors_name_the_problem_and_the_fix(lab: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"No scoring threshold for qubit_frequency") as caught:
        run_tool(lab, "get_degradation_report", {"param_names": ["qubit_frequency"]})
    assert caught.value.hint is not None and "t1" in caught.value.hint
    with pytest.raises(ToolError, match=r"Chip NOPE not found; chips of this project: 64Qv3"):
        run_tool(lab, "suggest_recalibration", {"chip_id": "NOPE"})
    empty = ToolContext(db=lab.db, project_id="proj-none", username="alice", settings=lab.settings)
    with pytest.raises(ToolError, match=r"No chips found"):
        run_tool(empty, "get_degradation_report", {})


def test_the_flow_file_orders_tasks_and_a_broken_one_names_itself(tmp_path: Path) -> None:
    packaged = load_flow(tmp_path)  # no override in an empty config directory
    assert (
        packaged.position("CheckRabi")
        < packaged.position("CheckT1")
        < packaged.position("CheckCrossResonance")
    )
    assert packaged.position("NotATask")[0] == len(packaged.qubit) + len(packaged.coupling)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "calibration_flow.yaml").write_text("qubit: [CheckT1]\nsteps: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"calibration_flow.yaml: steps: .*qubit: and coupling:"):
        load_flow(broken)


def test_recalibration_grades_a_failed_runs_value_by_its_last_good_one(lab: ToolContext) -> None:
    """A lab whose qubit document holds a value a failed run wrote (upstream never saves one; older
    releases and imports do): the plan grades the last value that passed and flags the other."""
    db = lab.db
    db.task_result_history.insert_many(
        [
            _run("g4", "CheckT1", "4", 1, {"t1": 90.0}),
            _run(
                "f4",
                "CheckT1",
                "4",
                3,
                {"t1": 12.0},
                status="failed",
                message="R² value too low (0.21 < 0.70)",
            ),
        ]
    )
    db.qubit.insert_one(
        {"project_id": "proj-demo", "chip_id": CHIP, "qid": "4", "data": {"t1": _current("f4", 12.0, "μs")}}
    )
    result = run_tool(lab, "suggest_recalibration", {})
    assert "4" not in {v["id"] for v in result["values"]}  # its last good T1 (90 μs) is good
    assert [row[:2] for row in result["flagged"]["rows"]] == [["0", "t1"], ["4", "t1"]]
    flagged = dict(zip(result["flagged"]["cols"], result["flagged"]["rows"][1], strict=True))
    assert flagged["value"] == 12.0 and flagged["last_good"] == 90.0 and flagged["why"].startswith("failed")
    assert result["excluded"] == 1  # Q0's excluded run is still counted
