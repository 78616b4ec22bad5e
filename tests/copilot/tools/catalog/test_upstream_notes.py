"""The notes tool on upstream documents: the dashboard's ``user_note`` on task results, and Qubex
note timestamps (naive lab-local strings) read in ``lab.timezone`` and shown in the display zone."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from bson import ObjectId

from qdash.settings import ConfigError, Settings, load_settings

from .upstream_rows import CHIP, PROJECT, START, chip_doc, tool_caller, upstream_run


def _noted(qid: str, minute: int, content: str) -> dict[str, Any]:
    note = {"content": content, "updated_by": "carol", "updated_at": START + timedelta(hours=minute)}
    return upstream_run(qid, minute, 40.0, user_note=note)


def _qubex_note(execution: str) -> dict[str, Any]:
    entry = {"target": "Q16", "amplitude": 0.031, "beta": -0.41, "timestamp": "2026-03-01 18:00:00"}
    return {
        "_id": ObjectId(), "project_id": PROJECT, "username": "alice", "chip_id": CHIP,
        "execution_id": execution, "task_id": "master", "note": {"drag_hpi_params": {"Q16": entry}},
        "version": 1, "timestamp": START,
    }  # fmt: skip


@pytest.fixture
def db(mongo_db: Any) -> Any:
    mongo_db.chip.insert_one(chip_doc())
    cleared = upstream_run("3", 9, 1.0, user_note={"content": "", "updated_by": "x", "updated_at": START})
    mongo_db.task_result_history.insert_many(
        [_noted("0", 1, "fit looks off: TLS?"), _noted("1", 2, "rerun after fridge warm-up"), cleared]
        + [upstream_run("0", m, 40.0) for m in range(3, 6)]
    )
    mongo_db.calibration_note.insert_one(_qubex_note("20260301-001"))
    mongo_db.execution_history.insert_many(
        [
            {
                "project_id": PROJECT,
                "chip_id": CHIP,
                "execution_id": f"20260301-{m:03d}",
                "start_at": START + timedelta(minutes=m),
            }
            for m in (1, 2, 3, 4, 5, 9)
        ]
    )
    return mongo_db


def test_user_notes_on_task_results_are_read(db: Any, settings: Settings) -> None:
    call = tool_caller(db, settings)
    result = call("get_calibration_notes", last_n=10)
    assert [(n["qid"], n["content"], n["by"]) for n in result["user_notes"]] == [
        ("1", "rerun after fridge warm-up", "carol"),
        ("0", "fit looks off: TLS?", "carol"),
    ]  # newest first; the cleared note is not shown
    assert [n["content"] for n in call("get_calibration_notes", qid="Q00", last_n=10)["user_notes"]] == [
        "fit looks off: TLS?"
    ]
    by_task = call("get_calibration_notes", task_id="task-1-2")
    assert by_task["user_notes"][0]["task_name"] == "CheckT1" and by_task["notes"] == []
    assert "user_notes" not in call("get_calibration_notes")  # newest 3 executions: 9 (cleared), 5, 4
    # chip-wide: the runs of the newest last_n executions (9, 5, 4, 3, 2 here)
    assert [n["content"] for n in call("get_calibration_notes", last_n=5)["user_notes"]] == [
        "rerun after fridge warm-up"
    ]
    by_execution = call("get_calibration_notes", execution_id="20260301-001")
    assert [n["content"] for n in by_execution["user_notes"]] == ["fit looks off: TLS?"]


def test_qubex_timestamps_are_lab_local(db: Any, tmp_path: Any) -> None:
    def shown(lab: str, display: str) -> str:
        settings = load_settings(
            database={"data_dir": str(tmp_path), "mongo_uri": None},
            lab={"timezone": lab},
            copilot={"timezone": display},
        )
        note = tool_caller(db, settings)("get_calibration_notes", qid="16")["notes"][0]["note"]
        return str(note["drag_hpi_params"]["Q16"]["timestamp"])

    assert shown("Asia/Tokyo", "UTC").endswith("03-01 09:00")  # 18:00 in Tokyo is 09:00 UTC
    assert shown("Asia/Tokyo", "Asia/Tokyo").endswith("03-01 18:00")
    assert shown("UTC", "UTC").endswith("03-01 18:00")  # the default: naive = UTC


def test_lab_timezone_must_be_an_iana_name(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match=r"lab\.timezone: .*use an IANA name"):
        load_settings(database={"data_dir": str(tmp_path)}, lab={"timezone": "JST+9"})
