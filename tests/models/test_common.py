"""ParameterModel and the Document base: UTC handling and Mongo round trips."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from pymongo.database import Database

from qdash.models import ParameterModel, QubitState


def test_naive_datetime_is_read_as_utc_and_aware_is_converted() -> None:
    naive = ParameterModel(calibrated_at=datetime(2026, 2, 27, 1, 42, 10))
    assert naive.calibrated_at == datetime(2026, 2, 27, 1, 42, 10, tzinfo=UTC)
    tokyo = timezone(timedelta(hours=9))
    aware = ParameterModel(calibrated_at=datetime(2026, 2, 27, 10, 42, 10, tzinfo=tokyo))
    assert aware.calibrated_at is not None
    assert aware.calibrated_at.utcoffset() == timedelta(0)
    assert aware.calibrated_at == datetime(2026, 2, 27, 1, 42, 10, tzinfo=UTC)


def test_int_values_stay_int_and_floats_stay_float() -> None:
    assert isinstance(ParameterModel(value=1024, value_type="int").value, int)
    assert isinstance(ParameterModel(value=45.21).value, float)


def test_qubit_round_trip_through_the_store(mongo_db: Database[dict[str, Any]]) -> None:
    when = datetime(2026, 2, 27, 1, 42, 10, tzinfo=UTC)
    qubit = QubitState(
        project_id="proj-demo",
        chip_id="64Qv3",
        qid="16",
        status="completed",
        data={
            "t1": ParameterModel(parameter_name="t1", value=45.21, unit="μs", error=1.3, calibrated_at=when)
        },
    )
    doc = qubit.to_mongo()
    assert doc["_id"] == "proj-demo:64Qv3:16"
    assert "id" not in doc
    mongo_db.qubit.insert_one(doc)
    stored = mongo_db.qubit.find_one({"_id": "proj-demo:64Qv3:16"})
    assert stored is not None
    back = QubitState.from_mongo(stored)
    assert back.id == "proj-demo:64Qv3:16"
    assert back.data["t1"].calibrated_at == when
    assert back.data["t1"].unit == "μs"
    assert back.model_dump(exclude={"id"}) == qubit.model_dump(exclude={"id"})


def test_unknown_upstream_fields_are_ignored() -> None:
    doc = {"_id": "x", "project_id": "p", "chip_id": "c", "qid": "1", "upstream_only": 3}
    assert QubitState.from_mongo(doc).qid == "1"
