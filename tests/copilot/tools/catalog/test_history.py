"""Run-history tools on the demo lab: latest result, task history, timeseries, search, executions,
available parameters."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from qdash.copilot.tools.catalog.formatting import sig4
from qdash.copilot.tools.executor import ToolExecutor
from qdash.copilot.tools.spec import ToolContext
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.data_store import MemoryDataStore
from qdash.engine.tool import RunContext

from .conftest import DEMO, OTHER, SPEC_BY_NAME, Call


def _runs(db: Any, project: str, **query: Any) -> list[dict[str, Any]]:
    return list(db.task_result_history.find({"project_id": project, **query}).sort("start_at", -1))


def test_latest_task_result_is_the_newest_completed_run(call: Call, demo_lab: Any) -> None:
    newest = _runs(demo_lab.db, DEMO, chip_id="64Qv3", name="CheckT1", qid="16", status="completed")[0]
    result = call("get_latest_task_result", task_name="checkt1", qid="Q16")
    assert (result["task_name"], result["qid"], result["task_id"]) == ("CheckT1", "16", newest["task_id"])
    assert result["execution_id"] == newest["execution_id"]
    t1 = newest["output_parameters"]["t1"]["value"]
    grade = "excellent" if t1 >= 100 else "good" if t1 >= 50 else "bad" if t1 < 20 else "fair"
    assert result["output_parameters"]["t1"] == {
        "value": sig4(t1),
        "unit": "μs",
        "grade": grade,
        "error": sig4(newest["output_parameters"]["t1"]["error"]),
    }


def test_unknown_task_is_an_error_and_no_result_is_a_result(call: Call, error: Callable[..., str]) -> None:
    message = error("get_latest_task_result", task_name="CheckT1x", qid="16")
    assert message.startswith("Unknown task_name 'CheckT1x'")
    assert "CheckT1" in message
    assert call("get_latest_task_result", task_name="CheckT1", qid="999") == {
        "count": 0,
        "filters": {"task_name": "CheckT1", "qid": "999", "chip_id": "64Qv3"},
    }


def test_task_history_rows_are_newest_first_with_errors(call: Call, demo_lab: Any) -> None:
    runs = _runs(demo_lab.db, DEMO, chip_id="64Qv3", name="CheckT2Echo", qid="3", status="completed")[:3]
    result = call("get_task_history", task_name="CheckT2Echo", qid="3", last_n=3)
    assert result["units"] == {"t2_echo": "μs"}
    assert result["cols"] == ["start_at", "execution_id", "cooldown_id", "t2_echo", "t2_echo.error"]
    assert [row[1:3] for row in result["rows"]] == [[r["execution_id"], r["cooldown_id"]] for r in runs]
    assert [row[3] for row in result["rows"]] == [
        sig4(r["output_parameters"]["t2_echo"]["value"]) for r in runs
    ]


def test_parameter_timeseries_is_chronological_and_shows_the_degrading_qubit(
    call: Call, demo_lab: Any
) -> None:
    qid = demo_lab.report.chip(DEMO, "64Qv3").t1_degrading_qubit
    result = call("get_parameter_timeseries", parameter_name="T1", qid=qid, last_n=10)
    assert result["unit"] == "μs"
    assert result["cols"] == ["t", "value", "error", "execution_id", "task_name", "cooldown_id"]
    cycles = [row[-1] for row in result["rows"]]  # the demo's cool-downs, oldest first
    assert [(c["cooldown_id"], c["points"]) for c in result["cooldowns"]] == [
        (cycle, cycles.count(cycle)) for cycle in dict.fromkeys(cycles)
    ]
    times = [row[0] for row in result["rows"]]
    assert times == sorted(times)
    values = [row[1] for row in result["rows"]]
    newest = _runs(
        demo_lab.db, DEMO, chip_id="64Qv3", qid=qid, status="completed", output_parameter_names="t1"
    )
    assert len(values) == min(10, len(newest)) >= 6
    assert values == [sig4(r["output_parameters"]["t1"]["value"]) for r in reversed(newest[: len(values)])]
    assert statistics.median(values[-3:]) < 0.8 * statistics.median(values[:3])  # robust to one TLS dip


async def test_parameter_timeseries_clamps(call: Call, make_ctx: Callable[[str], ToolContext]) -> None:
    """The executor clamps ``last_n`` to the args model's bound and reports it."""
    store = MemoryDataStore({}, 10_000_000, 10_000_000)
    turn = TurnState(replace(make_ctx(DEMO), store=store), store)
    executor = ToolExecutor(SPEC_BY_NAME["get_parameter_timeseries"], {})
    out = await executor(RunContext(turn), {"parameter_name": "t1", "qid": "2", "last_n": 1000})
    assert not out.is_error and json.loads(out.model_text)["_clamped"] == {"last_n": 100}
    assert len(call("get_parameter_timeseries", parameter_name="t1", qid="2", last_n=100)["rows"]) <= 100
    assert call("get_parameter_timeseries", parameter_name="t1", qid="999") == {
        "count": 0,
        "filters": {"parameter_name": "t1", "qid": "999", "chip_id": "64Qv3"},
        "hint": "list_available_parameters shows which parameters exist",
    }


def test_search_filters_by_status_and_execution(call: Call, demo_lab: Any) -> None:
    failed = _runs(demo_lab.db, DEMO, chip_id="64Qv3", status="failed")
    result = call("search_task_results", status="failed", last_n=50)
    assert {row[result["cols"].index("status")] for row in result["rows"]} == {"failed"}
    assert [row[0] for row in result["rows"]] == [r["task_id"] for r in failed[:50]]
    execution = failed[0]["execution_id"]
    in_execution = call("search_task_results", execution_id=execution, task_name="CheckT1", qid="4")
    assert {row[result["cols"].index("execution_id")] for row in in_execution["rows"]} == {execution}
    none = call("search_task_results", status="failed", execution_id="exec-none", task_name="CheckT1")
    filters = {"chip_id": "64Qv3", "task_name": "CheckT1", "status": "failed", "execution_id": "exec-none"}
    assert none == {"count": 0, "filters": filters}


def test_execution_history_filters(call: Call, demo_lab: Any) -> None:
    stored = list(
        demo_lab.db.execution_history.find({"project_id": DEMO, "chip_id": "64Qv3", "tags": "1Q"}).sort(
            "start_at", -1
        )
    )
    result = call("get_execution_history", tags=["1Q"], last_n=50)
    assert result["units"] == {"elapsed_time": "s"}
    assert [row[0] for row in result["rows"]] == [e["execution_id"] for e in stored[:50]]
    assert all("1Q" in row[result["cols"].index("tags")] for row in result["rows"])
    assert call("get_execution_history", status="running", tags=["nope"]) == {
        "count": 0,
        "filters": {"chip_id": "64Qv3", "status": "running", "tags": ["nope"]},
    }


def test_available_parameters_of_one_qubit(call: Call, demo_lab: Any) -> None:
    saved = demo_lab.db.qubit.find_one({"project_id": DEMO, "chip_id": "64Qv3", "qid": "7"})["data"]
    completed = demo_lab.db.task_result_history.distinct(
        "output_parameter_names", {"project_id": DEMO, "chip_id": "64Qv3", "status": "completed", "qid": "7"}
    )
    result = call("list_available_parameters", qid="Q07")
    assert result == {"chip_id": "64Qv3", "qid": "7", "parameter_names": sorted(saved), "count": len(saved)}
    assert set(completed) <= set(saved) and "t1" in saved
    coupling = call("list_available_parameters", qid="1-0")["parameter_names"]
    assert "zx90_gate_fidelity" in coupling and "t1" not in coupling
    assert call("list_available_parameters", qid="999") == {
        "chip_id": "64Qv3",
        "qid": "999",
        "parameter_names": [],
        "count": 0,
    }


def test_history_is_scoped_by_project(call: Call, demo_lab: Any) -> None:
    theirs = {e["execution_id"] for e in demo_lab.db.execution_history.find({"project_id": OTHER})}
    ours = call("get_execution_history", project=OTHER, chip_id="64Qv3", last_n=50)
    assert {row[0] for row in ours["rows"]} <= theirs
    runs = call("search_task_results", project=OTHER, chip_id="64Qv3", last_n=50)["rows"]
    other_tasks = {
        r["task_id"] for r in demo_lab.db.task_result_history.find({"project_id": OTHER}, {"task_id": 1})
    }
    assert runs and {row[0] for row in runs} <= other_tasks


def test_execution_history_with_status_and_tags(call: Call, demo_lab: Any) -> None:
    query = {"project_id": DEMO, "chip_id": "64Qv3", "tags": {"$all": ["2Q"]}, "status": "failed"}
    stored = list(demo_lab.db.execution_history.find(query).sort("start_at", -1))
    aborted = demo_lab.report.chip(DEMO, "64Qv3").aborted_execution_id
    result = call("get_execution_history", status="failed", tags=["2Q"])
    assert [row[0] for row in result["rows"]] == [e["execution_id"] for e in stored[:10]]
    assert aborted in [row[0] for row in result["rows"]]


def test_task_search_without_status_lists_every_status(call: Call, demo_lab: Any) -> None:
    runs = _runs(demo_lab.db, DEMO, chip_id="64Qv3", name="CheckT1")
    result = call("search_task_results", task_name="CheckT1", last_n=50)
    assert [row[0] for row in result["rows"]] == [r["task_id"] for r in runs[:50]]


def test_available_parameters_of_the_whole_chip(call: Call, demo_lab: Any) -> None:
    saved: set[str] = set()
    for collection in ("qubit", "coupling"):
        for doc in demo_lab.db[collection].find({"project_id": DEMO, "chip_id": "64Qv3"}):
            saved |= set(doc.get("data", {}))
    completed = demo_lab.db.task_result_history.distinct(
        "output_parameter_names", {"project_id": DEMO, "chip_id": "64Qv3", "status": "completed"}
    )
    result = call("list_available_parameters")
    assert result["parameter_names"] == sorted(saved)
    assert set(completed) <= saved
    assert {"t1", "zx90_gate_fidelity", "anharmonicity"} <= saved
