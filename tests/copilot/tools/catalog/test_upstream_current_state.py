"""Current state as upstream writes it: both directions of every coupling (only the calibrated one
has data) and seed-imported qubits stored as ``"05"``."""

from __future__ import annotations

from typing import Any

import pytest
from bson import ObjectId

from qdash.settings import Settings

from .upstream_rows import CHIP, PROJECT, chip_doc, qubit_doc, tool_caller


def _coupling(qid: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"_id": ObjectId(), "project_id": PROJECT, "username": "alice", "chip_id": CHIP, "qid": qid,
            "status": "pending", "data": data, "edge_info": {}}  # fmt: skip


ZX90 = {
    "zx90_gate_fidelity": {"parameter_name": "zx90_gate_fidelity", "value": 0.95, "unit": "", "error": 0.01}
}


@pytest.fixture
def call(mongo_db: Any, settings: Settings) -> Any:
    mongo_db.chip.insert_one(chip_doc())
    mongo_db.coupling.insert_many(
        [_coupling("0-1", ZX90), _coupling("1-0", {}), _coupling("5-1", ZX90), _coupling("1-5", {}),
         _coupling("1-2", {}), _coupling("2-1", {})]
    )  # fmt: skip
    t1 = {"t1": {"parameter_name": "t1", "value": 33.0, "unit": "μs"}}
    mongo_db.qubit.insert_many([qubit_doc("05", t1), qubit_doc("1"), qubit_doc("0")])
    return tool_caller(mongo_db, settings)


def test_each_coupling_pair_is_listed_once_with_its_data(call: Any) -> None:
    by_qubit = call("get_coupling_params", qubit_id="1", chip_id=CHIP)
    listed = {c["coupling_id"]: c["data"] for c in by_qubit["couplings"]}
    assert set(listed) == {"0-1", "1-2", "5-1"}
    assert listed["0-1"]["zx90_gate_fidelity"]["value"] == 95 and listed["5-1"]
    reverse = call("get_coupling_params", coupling_id="1-0")["couplings"]
    assert [(c["coupling_id"], bool(c["data"])) for c in reverse] == [("0-1", True)]


def test_seed_imported_qubits_are_found_by_their_index(call: Any) -> None:
    assert call("get_qubit_params", qid="Q05")["params"]["t1"]["value"] == 33
    summary = call("get_chip_summary")
    assert [q["qid"] for q in summary["qubits"]] == ["0", "1", "5"]


def test_parameters_of_a_seed_imported_qubit_are_listed(call: Any) -> None:
    assert call("list_available_parameters", qid="5")["parameter_names"] == ["t1"]
