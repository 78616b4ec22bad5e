"""``get_task_knowledge``: the packaged (or the operator's) task knowledge with the lab's criteria,
units as the project's newest run stored them; a task without knowledge is an empty result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qdash.copilot.prompts.knowledge import load_task_knowledge
from qdash.settings import Settings, load_settings

from .conftest import Call
from .upstream_rows import chip_doc, tool_caller


def _outputs(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    table = result["outputs"]
    return {row[0]: dict(zip(table["cols"], row, strict=True)) for row in table["rows"]}


def test_knowledge_with_the_labs_thresholds_and_units(call: Call, settings: Settings) -> None:
    result = call("get_task_knowledge", task_name="checkt1")
    known = load_task_knowledge(settings.config_dir)["CheckT1"]
    about = result["knowledge"]
    assert (result["task_name"], about["summary"], about["good"]) == ("CheckT1", known.summary, known.good)
    assert about["failures"] == list(known.failures)
    assert result["limits"] == {"max_relative_error": 0.3, "min_r2": 0.7}
    t1 = _outputs(result)["t1"]
    assert (t1["unit"], t1["bounds"]) == ("μs", [0.1, 5000.0])
    assert t1["thresholds"] == "excellent ≥ 100, good ≥ 50, bad < 20"


def test_every_stored_output_is_listed_with_its_unit(call: Call, demo_lab: Any) -> None:
    run = demo_lab.db.task_result_history.find_one(
        {"project_id": "proj-demo", "chip_id": "64Qv3", "name": "CheckT2Echo", "status": "completed"},
        sort=[("start_at", -1)],
    )
    outputs = _outputs(call("get_task_knowledge", task_name="CheckT2Echo"))
    assert {name: row["unit"] for name, row in outputs.items()} == {
        name: body["unit"] for name, body in run["output_parameters"].items()
    }


def test_a_task_not_run_lately_takes_units_from_a_current_qubit(call: Call) -> None:
    outputs = _outputs(call("get_task_knowledge", task_name="CheckRabi"))  # weekly: not in the walk
    units = {name: row["unit"] for name, row in outputs.items()}
    assert units == {"rabi_amplitude": "a.u.", "rabi_frequency": "MHz"}


def test_a_task_without_knowledge_is_an_empty_result(call: Call) -> None:
    assert call("get_task_knowledge", task_name="CheckStatus") == {
        "count": 0,
        "filters": {"task_name": "CheckStatus"},
        "hint": "no stored knowledge for this task",
    }


def test_an_unknown_task_is_an_error(error: Any) -> None:
    assert "closest: CheckT1" in error("get_task_knowledge", task_name="CheckT1x")


def test_the_operators_file_wins_and_units_fall_back_to_the_thresholds(tmp_path: Path, mongo_db: Any) -> None:
    (tmp_path / "task_knowledge.yaml").write_text(
        "CheckT1:\n  summary: Our own T1 check.\n  review: {outputs: [t1]}\n", encoding="utf-8"
    )
    settings = load_settings(config_dir=tmp_path, database={"data_dir": str(tmp_path), "mongo_uri": None})
    mongo_db.chip.insert_one(chip_doc())
    result = tool_caller(mongo_db, settings)("get_task_knowledge", task_name="CheckT1")
    assert result["knowledge"] == {"summary": "Our own T1 check."} and "limits" not in result
    assert _outputs(result)["t1"]["unit"] == "μs"  # no run yet: the scoring unit


@pytest.mark.parametrize("task", ["CheckZX90", "CreateHPIPulse"])
def test_knowledge_of_other_tasks(call: Call, task: str) -> None:
    assert call("get_task_knowledge", task_name=task)["task_name"] == task
