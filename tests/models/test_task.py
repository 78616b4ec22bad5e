"""Task results, executions and notes: the output_parameter_names invariant and round trips."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError
from pymongo.database import Database

from qdash.models import CalibrationNote, ExecutionHistory, ParameterModel, TaskResultHistory

T0 = datetime(2026, 2, 27, 1, 40, 47, tzinfo=UTC)


def _result(**extra: Any) -> dict[str, Any]:
    return {
        "project_id": "proj-demo",
        "task_id": "5b0c7a3e-2f1d-4c39-9a57-0e4b5d7f9c21",
        "name": "CheckT1",
        "status": "completed",
        "qid": "16",
        "chip_id": "64Qv3",
        "execution_id": "20260227-001",
        "output_parameters": {"t1": {"value": 45.21, "unit": "μs", "error": 1.3}},
        "run_parameters": {"shots": {"value": 1024, "unit": "", "value_type": "int"}},
        "start_at": T0,
        **extra,
    }


def test_names_are_derived_when_missing() -> None:
    assert TaskResultHistory.model_validate(_result()).output_parameter_names == ["t1"]


def test_names_that_differ_from_the_keys_are_rejected() -> None:
    with pytest.raises(ValidationError, match="must equal the keys of output_parameters"):
        TaskResultHistory.model_validate(_result(output_parameter_names=["t2_echo"]))


def test_empty_outputs_mean_empty_names() -> None:
    doc = _result(output_parameters={}, name="CheckHPIPulse")
    assert TaskResultHistory.model_validate(doc).output_parameter_names == []


def test_unknown_status_is_rejected() -> None:
    with pytest.raises(ValidationError, match="status"):
        TaskResultHistory.model_validate(_result(status="done"))


def test_task_result_round_trip(mongo_db: Database[dict[str, Any]]) -> None:
    model = TaskResultHistory.model_validate(_result())
    doc = model.to_mongo()
    assert doc["_id"] == model.task_id
    assert doc["output_parameter_names"] == ["t1"]
    mongo_db.task_result_history.insert_one(doc)
    stored = mongo_db.task_result_history.find_one({"_id": model.task_id})
    assert stored is not None
    back = TaskResultHistory.from_mongo(stored)
    assert back == model.model_copy(update={"id": model.task_id})
    assert back.start_at is not None and back.start_at.tzinfo is not None
    assert isinstance(back.output_parameters["t1"], ParameterModel)


def test_execution_and_note_ids_are_scoped_by_project() -> None:
    execution = ExecutionHistory(project_id="proj-demo", name="1Q-Calibration", execution_id="20260227-001")
    note = CalibrationNote(project_id="proj-demo", chip_id="64Qv3", execution_id="20260227-001", version=12)
    assert execution.to_mongo()["_id"] == "proj-demo:20260227-001"
    assert note.to_mongo()["_id"] == "proj-demo:64Qv3:20260227-001:master"


def test_upstream_fields_and_older_elapsed_time_strings() -> None:
    older = TaskResultHistory.model_validate(_result(elapsed_time="0:01:23"))
    assert older.elapsed_time == 83.0 and older.excluded is False and older.cooldown_id == ""
    newer = TaskResultHistory.model_validate(
        _result(
            elapsed_time=12.5,
            excluded=True,
            excluded_reason="bad fit",
            excluded_by="bob",
            excluded_at=T0,
            cooldown_id="cd-2",
            user_note={"content": "TLS?", "updated_by": "carol", "updated_at": T0},
        )
    )
    assert (newer.excluded, newer.excluded_by, newer.cooldown_id, newer.user_note.content) == (
        True, "bob", "cd-2", "TLS?",
    )  # fmt: skip
    with pytest.raises(ValidationError, match="elapsed_time"):
        TaskResultHistory.model_validate(_result(elapsed_time="soon"))
