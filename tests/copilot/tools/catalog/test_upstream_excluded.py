"""Runs a person excluded on upstream's dashboard leave every statistic, series and history, and
each result says how many were left out; rows without ``project_id`` are never read."""

from __future__ import annotations

from typing import Any

import pytest

from qdash.copilot.analysis_context import gather_analysis_inputs
from qdash.copilot.requests import AnalyzeRequest
from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.spec import ToolContext
from qdash.settings import Settings

from .upstream_rows import chip_doc, excluded, qubit_doc, tool_caller, upstream_run

BAD = 999.0  # the value of every excluded run: it must show up nowhere


@pytest.fixture
def call(mongo_db: Any, settings: Settings) -> Any:
    runs = [upstream_run("0", m, 40.0 + m) for m in range(5)]
    runs[4] = excluded(runs[4])  # the newest
    runs[2] = excluded({**runs[2], "output_parameters": {"t1": {"value": BAD, "unit": "μs"}}})
    runs[4]["output_parameters"] = {"t1": {"value": BAD, "unit": "μs"}}
    runs += [upstream_run("1", m, 60.0 + m) for m in range(3)]
    runs.append(excluded(upstream_run("1", 10, BAD)))
    mongo_db.task_result_history.insert_many(runs)
    mongo_db.chip.insert_one(chip_doc())
    mongo_db.qubit.insert_many([qubit_doc("0"), qubit_doc("1")])
    return tool_caller(mongo_db, settings)


def _values(result: dict[str, Any], column: str) -> list[Any]:
    index = result["cols"].index(column)
    return [row[index] for row in result["rows"]]


def test_single_qubit_history_tools_skip_and_count(call: Any) -> None:
    latest = call("get_latest_task_result", task_name="CheckT1", qid="0")
    assert latest["output_parameters"]["t1"]["value"] == 43 and latest["excluded"] == 1
    history = call("get_task_history", task_name="CheckT1", qid="0", last_n=10)
    assert _values(history, "t1") == [43, 41, 40] and history["excluded"] == 2
    series = call("get_parameter_timeseries", parameter_name="t1", qid="0", last_n=10)
    assert _values(series, "value") == [40, 41, 43] and series["excluded"] == 2
    found = call("search_task_results", qid="0", last_n=10)
    assert len(found["rows"]) == 3 and found["excluded"] == 2
    newest = call("get_task_history", task_name="CheckT1", qid="0", last_n=1)
    assert newest["excluded"] == 1  # only the excluded runs inside the window are counted
    assert "excluded" not in call("search_task_results", execution_id="20260301-001")


def test_chip_wide_series_and_heatmap_skip_and_count(call: Any) -> None:
    chip = call("get_chip_parameter_timeseries", parameter_name="t1", qids=["0", "1"], last_n=10)
    assert BAD not in [point["v"] for point in chip["timeseries"]]
    assert chip["excluded"] == 3
    assert {q["qid"]: q["latest"] for q in chip["qubits"]} == {"0": 43.0, "1": 62.0}
    for mode in ("latest", "average", "best"):
        heatmap = call("generate_chip_heatmap", metric_name="t1", selection_mode=mode)
        assert heatmap["statistics"]["max"][1] < BAD and heatmap["statistics"]["excluded"] >= 1


def test_only_excluded_runs_is_an_empty_result_that_says_why(call: Any, mongo_db: Any) -> None:
    mongo_db.task_result_history.insert_one(excluded(upstream_run("5", 1, BAD)))
    result = call("get_latest_task_result", task_name="CheckT1", qid="5")
    assert (result["count"], result["excluded"]) == (0, 1)


def test_rows_without_project_id_are_never_read(call: Any, mongo_db: Any) -> None:
    orphan = upstream_run("0", 100, 7.0)  # newer than everything, but no project
    del orphan["project_id"]
    mongo_db.task_result_history.insert_one(orphan)
    assert (
        call("get_latest_task_result", task_name="CheckT1", qid="0")["output_parameters"]["t1"]["value"] == 43
    )
    assert "task-0-100" not in _values(call("search_task_results", last_n=50), "task_id")
    series = call("get_parameter_timeseries", parameter_name="t1", qid="0", last_n=100)
    assert 7 not in _values(series, "value")


def test_elapsed_time_strings_of_older_rows_read_as_seconds(call: Any, mongo_db: Any) -> None:
    older = upstream_run("7", 1, 40.0, elapsed_time="0:01:23")
    mongo_db.task_result_history.insert_many([older, upstream_run("7", 2, 41.0, elapsed_time="12.3")])
    found = call("search_task_results", qid="7")
    assert _values(found, "elapsed_time") == [12.3, 83] and found["units"]["elapsed_time"] == "s"
    execution = {"project_id": "proj-up", "chip_id": "64Qv3", "execution_id": "e1", "name": "x"}
    execution |= {"status": "completed", "tags": [], "start_at": older["start_at"], "elapsed_time": "0:00:30"}
    mongo_db.execution_history.insert_one(execution)
    assert _values(call("get_execution_history"), "elapsed_time") == [30]


def test_current_values_from_an_excluded_run_are_marked(call: Any, mongo_db: Any) -> None:
    produced_by = {"value": 44.0, "unit": "μs", "execution_id": "20260301-004", "task_id": "task-0-4"}
    kept = {"value": 5.1, "unit": "GHz", "execution_id": "20260301-001", "task_id": "task-0-1"}
    mongo_db.qubit.update_one(
        {"project_id": "proj-up", "qid": "0"},
        {"$set": {"data": {"t1": produced_by, "qubit_frequency": kept}}},
    )
    params = call("get_qubit_params", qid="0")
    assert params["params"]["t1"]["invalid"] == "excluded: bad fit" and params["invalid"] == ["t1"]
    assert "invalid" not in params["params"]["qubit_frequency"]
    assert "invalid" not in call("get_qubit_params", qid="1")
    compared = call("compare_qubits", qids=["0", "1"], param_names=["t1", "qubit_frequency"])
    assert compared["rows"][0] == ["0", 43, 5.1]  # t1 of qid 0: its last good value
    flagged = compared["flagged"]["rows"]
    assert flagged[0][:5] == ["0", "t1", 44, "excluded: bad fit", 43] and flagged[0][5].endswith(
        "03-01 00:03"
    )


async def test_analysis_of_an_excluded_run_says_so(call: Any, mongo_db: Any, settings: Settings) -> None:
    service = CopilotDataService(ToolContext(mongo_db, "proj-up", "alice", settings))
    request = AnalyzeRequest(
        task_name="CheckT1",
        chip_id="64Qv3",
        qid="0",
        execution_id="20260301-004",
        task_id="task-0-4",
        message="ok?",
    )
    inputs = await gather_analysis_inputs(service, request, None, 1_000_000)
    assert inputs.context.status == "completed, excluded from metrics by bob: bad fit"
    history = inputs.context.recent_history[0]
    assert BAD not in [value for row in history["rows"] for value in row] and history["excluded"] == 2


R2_FAILED = "CheckT1 R² value too low: 0.2700 (threshold = 0.7)"


@pytest.fixture
def superseded(call: Any, mongo_db: Any) -> Any:
    """Qubit 1's current T1 from a run that failed its R² check (as releases that saved such values
    wrote it), qubit 0's from a run a person excluded; their last good runs: 43 and 62 μs."""
    failed = {**upstream_run("1", 20, 25.0), "status": "failed", "message": R2_FAILED}
    mongo_db.task_result_history.insert_one(failed)
    for qid, task, value in (("0", "task-0-4", BAD), ("1", "task-1-20", 25.0)):
        produced = {"value": value, "unit": "μs", "execution_id": f"e-{task}", "task_id": task}
        mongo_db.qubit.update_one({"project_id": "proj-up", "qid": qid}, {"$set": {"data": {"t1": produced}}})
    return call


def test_a_current_value_from_a_failed_or_excluded_run_says_so_beside_its_last_good_value(
    superseded: Any,
) -> None:
    one = superseded("get_qubit_params", qid="1")
    t1 = one["params"]["t1"]
    assert (t1["value"], t1["invalid"], one["invalid"]) == (25, f"failed: {R2_FAILED}", ["t1"])
    assert "grade" not in t1  # a failed fit's value is not graded; its last good one is
    good = t1["last_good"]
    assert (good["value"], good["grade"], good["execution_id"]) == (62, "good", "20260301-002")
    assert good["calibrated_at"].endswith("03-01 00:02")  # the year shows unless it is this one
    zero = superseded("get_qubit_params", qid="0")["params"]["t1"]
    assert (zero["invalid"], zero["last_good"]["value"]) == ("excluded: bad fit", 43)


def test_chip_statistics_and_grades_use_the_last_good_values_and_say_so(superseded: Any) -> None:
    summary = superseded("get_chip_summary", param_names=["t1"])
    assert summary["table"]["rows"] == [["0", 43], ["1", 62]]
    stats = summary["statistics"]["t1"]
    assert (stats["min"], stats["max"]) == (["0", 43], ["1", 62])
    assert stats["last_good_for"] == ["0", "1"]
    assert summary["grades"]["t1"] == {"fair": ["0"], "good": ["1"]}
    assert summary["flagged"]["cols"] == ["qid", "parameter", "value", "why", "last_good", "last_good_at"]
    assert [row[:5] for row in summary["flagged"]["rows"]] == [
        ["0", "t1", BAD, "excluded: bad fit", 43],
        ["1", "t1", 25, f"failed: {R2_FAILED}", 62],
    ]
    compared = superseded("compare_qubits", qids=["0", "1"], param_names=["t1"])
    assert compared["rows"] == [["0", 43], ["1", 62]] and len(compared["flagged"]["rows"]) == 2
    heatmap = superseded("generate_chip_heatmap", metric_name="t1")
    assert heatmap["table"]["rows"] == [["0", 43], ["1", 62]]
    assert heatmap["statistics"]["last_good_for"] == ["0", "1"]


def test_without_a_last_good_value_the_flagged_value_is_left_out(superseded: Any, mongo_db: Any) -> None:
    mongo_db.task_result_history.delete_many({"qid": "1", "status": "completed"})
    summary = superseded("get_chip_summary", param_names=["t1"])
    assert summary["table"]["rows"] == [["0", 43], ["1", None]]
    assert summary["statistics"]["t1"]["count"] == 1 and summary["flagged"]["rows"][1][4] is None
    assert superseded("get_qubit_params", qid="1")["params"]["t1"]["last_good"] is None


async def test_analysis_of_a_failed_run_compares_the_neighbours_on_its_tasks_outputs(
    demo_lab: Any, settings: Settings
) -> None:
    """A failed run holds no outputs (upstream clears them): the neighbours are compared on the
    task's declared outputs (task knowledge), not on every parameter they have."""
    failed = demo_lab.db.task_result_history.find_one(
        {"project_id": "proj-demo", "chip_id": "64Qv3", "name": "CheckT1", "status": "failed"}
    )
    service = CopilotDataService(ToolContext(demo_lab.db, "proj-demo", "alice", settings))
    request = AnalyzeRequest(
        task_name="CheckT1",
        chip_id="64Qv3",
        qid=failed["qid"],
        execution_id=failed["execution_id"],
        task_id=failed["task_id"],
        message="ok?",
    )
    inputs = await gather_analysis_inputs(service, request, None, 1_000_000)
    assert inputs.context.output_parameters == {}
    assert inputs.context.neighbours and inputs.context.neighbours[0]["cols"] == ["qid", "t1"]
