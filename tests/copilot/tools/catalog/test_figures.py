"""Which figures a task result has: the latest result lists its files (and attaches the PNG), a
search lists each run's files, an execution counts them; PNG and Plotly JSON figures alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qdash.copilot.tools.output import ToolResult
from qdash.models.answer import FigureBlock
from qdash.settings import Settings

from .conftest import DEMO, Call
from .upstream_rows import chip_doc, tool_caller, upstream_run


def test_the_latest_result_lists_its_figure_files(
    call_result: Callable[..., ToolResult], demo_lab: Any
) -> None:
    run = demo_lab.db.task_result_history.find_one(
        {"project_id": DEMO, "chip_id": "64Qv3", "name": "CheckT1", "qid": "7", "status": "completed"},
        sort=[("start_at", -1)],
    )
    result = call_result("get_latest_task_result", task_name="CheckT1", qid="7")
    assert (
        result.data["figures"]
        == [path.rsplit("/", 1)[-1] for path in run["figure_path"]]
        == ["CheckT1_7.png"]
    )
    [attached] = result.attachments
    assert isinstance(attached, FigureBlock) and attached.figure.path == run["figure_path"][0]


def test_search_rows_carry_figures_and_skipped_runs_none(call: Call) -> None:
    result = call("search_task_results", status="skipped", last_n=3)
    assert "figures" not in result["cols"]  # skipped runs saved nothing: the empty column is dropped
    failed = call("search_task_results", task_name="CheckT1", status="failed", last_n=3)
    cols = failed["cols"]
    for row in failed["rows"]:
        assert row[cols.index("figures")] == [f"CheckT1_{row[cols.index('qid')]}.png"]


def test_json_figures_count_too(mongo_db: Any, settings: Settings) -> None:
    run = upstream_run(
        "3", 1, 40.0, figure_path=["fig/CheckT1_3.png"], json_figure_path=["fig/CheckT1_3.json"]
    )
    mongo_db.task_result_history.insert_one(run)
    mongo_db.chip.insert_one(chip_doc())
    mongo_db.execution_history.insert_one(
        {
            "project_id": "proj-up",
            "execution_id": run["execution_id"],
            "chip_id": "64Qv3",
            "status": "completed",
        }
    )
    call = tool_caller(mongo_db, settings)
    latest = call("get_latest_task_result", task_name="CheckT1", qid="3")
    assert latest["figures"] == ["CheckT1_3.png", "CheckT1_3.json"]
    detail = call("get_execution_history", execution_id=run["execution_id"])
    assert detail["execution"]["figures"] == 2
