"""get_qubit_params, compare_qubits, get_coupling_params on the demo lab."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qdash.copilot.tools.catalog.formatting import shown as rounded
from qdash.copilot.tools.catalog.formatting import sig4
from qdash.units import shown_unit

from .conftest import DEMO, OTHER, Call


def _qubit(db: Any, project: str, chip: str, qid: str) -> dict[str, Any]:
    doc = db.qubit.find_one({"project_id": project, "chip_id": chip, "qid": qid})
    assert doc is not None
    return dict(doc)


def test_qubit_params_are_the_stored_current_values_with_units(call: Call, demo_lab: Any) -> None:
    stored = _qubit(demo_lab.db, DEMO, "64Qv3", "16")
    result = call("get_qubit_params", qid="Q16")  # default chip: the project's latest installed
    assert (result["chip_id"], result["qid"], result["status"]) == ("64Qv3", "16", stored.get("status"))
    assert set(result["params"]) == set(stored["data"])
    for name, param in stored["data"].items():
        shown = result["params"][name]
        scale, unit = shown_unit(name, param["unit"])
        assert shown["value"] == rounded(param["value"] * scale, unit)  # GHz to 6 figures, else 4
        assert shown["unit"] == unit
        assert shown.get("error", 0) == (sig4((param.get("error") or 0) * scale) or 0)
        assert shown["execution_id"] == param["execution_id"]
    assert result["params"]["t1"]["unit"] == "μs"
    assert result["params"]["qubit_frequency"]["unit"] == "GHz"


def test_qubit_params_errors_and_isolation(call: Call, error: Callable[..., str], demo_lab: Any) -> None:
    assert error("get_qubit_params", qid="999") == "Qubit 999 not found (chip_id=64Qv3)"
    # proj-other has its own 64Qv3: same chip id, its own values
    theirs = _qubit(demo_lab.db, OTHER, "64Qv3", "5")
    result = call("get_qubit_params", project=OTHER, chip_id="64Qv3", qid="5")
    assert result["params"]["t1"]["value"] == sig4(theirs["data"]["t1"]["value"])
    assert result["params"]["t1"]["value"] != call("get_qubit_params", qid="5")["params"]["t1"]["value"]
    # 144Qv2 exists only in proj-demo
    assert error("get_qubit_params", project=OTHER, chip_id="144Qv2", qid="0") == (
        "Chip 144Qv2 not found; chips of this project: 64Qv3"
    )


def test_compare_qubits_one_row_per_found_qubit(call: Call, error: Callable[..., str], demo_lab: Any) -> None:
    result = call("compare_qubits", qids=["Q1", "0", "999"], param_names=["T1", "qubit_frequency"])
    assert result["cols"] == ["qid", "t1", "qubit_frequency"]
    assert result["units"] == {"t1": "μs", "qubit_frequency": "GHz"}
    assert result["not_found"] == ["999"]
    assert [row[0] for row in result["rows"]] == ["0", "1"]
    for row in result["rows"]:
        data = _qubit(demo_lab.db, DEMO, "64Qv3", row[0])["data"]
        assert row[1:] == [sig4(data["t1"]["value"]), rounded(data["qubit_frequency"]["value"], "GHz")]
    assert error("compare_qubits", qids=["998", "999"]).startswith("Qubit 998, 999 not found")


def _coupling_ids(db: Any, project: str, chip: str) -> set[str]:
    return {d["qid"] for d in db.coupling.find({"project_id": project, "chip_id": chip}, {"qid": 1})}


def test_coupling_by_id_in_either_order(call: Call, demo_lab: Any) -> None:
    stored_ids = _coupling_ids(demo_lab.db, DEMO, "64Qv3")
    listed = sorted(stored_ids)[0]
    first, second = listed.split("-")
    result = call("get_coupling_params", coupling_id=f"Q{second}-Q{first}")
    assert [c["coupling_id"] for c in result["couplings"]] == [listed]
    stored = demo_lab.db.coupling.find_one({"project_id": DEMO, "chip_id": "64Qv3", "qid": listed})
    data = result["couplings"][0]["data"]
    assert set(data) == set(stored["data"])
    for name, param in stored["data"].items():
        assert data[name]["value"] == sig4(param["value"] * shown_unit(name, param["unit"])[0])


def test_couplings_of_a_qubit_come_from_the_topology(call: Call, demo_lab: Any) -> None:
    result = call("get_coupling_params", qubit_id="Q5", param_names=["zx90_gate_fidelity"])
    topology = call("get_chip_topology")["couplings"]
    expected = {c for c in topology if "5" in c.split("-")} & _coupling_ids(demo_lab.db, DEMO, "64Qv3")
    assert {c["coupling_id"] for c in result["couplings"]} == expected
    assert all(set(c["data"]) <= {"zx90_gate_fidelity"} for c in result["couplings"])


def test_coupling_errors(call: Call, error: Callable[..., str]) -> None:
    assert error("get_coupling_params", qubit_id="99") == "Invalid qubit_id"
    assert (
        error("get_coupling_params", chip_id="NOPE", qubit_id="1")
        == "Chip NOPE not found; chips of this project: 64Qv3, 144Qv2"
    )
    assert call("get_coupling_params", coupling_id="0-63") == {
        "count": 0,
        "filters": {"chip_id": "64Qv3", "coupling_id": "0-63"},
    }
    assert error("get_coupling_params", project=OTHER, chip_id="144Qv2", qubit_id="1") == (
        "Chip 144Qv2 not found; chips of this project: 64Qv3"
    )


def test_without_coupling_or_qubit_every_coupling_is_graded_and_ranked(call: Call, demo_lab: Any) -> None:
    """Chip-wide: one table of every coupling (ranked best first for one parameter), grades by the
    lab's thresholds, statistics with the unit; values from the stored coupling documents."""
    stored = {
        doc["qid"]: doc["data"]["zx90_gate_fidelity"]["value"]
        for doc in demo_lab.db.coupling.find({"project_id": DEMO, "chip_id": "64Qv3"})
        if "zx90_gate_fidelity" in doc.get("data", {})
    }
    stored_unit = next(iter(demo_lab.db.coupling.find({"project_id": DEMO, "chip_id": "64Qv3"})))["data"][
        "zx90_gate_fidelity"
    ]["unit"]
    scale, unit = shown_unit("zx90_gate_fidelity", stored_unit)
    assert unit == "%"  # the display unit of every fidelity (qdash/units.py)
    result = call("get_coupling_params", param_names=["zx90_gate_fidelity"])
    assert result["num_couplings"] >= len(stored) > 10 and result["ranked_by"] == "zx90_gate_fidelity"
    rows = result["table"]["rows"]
    assert result["table"]["cols"] == ["coupling_id", "zx90_gate_fidelity"]
    shown = {cid: value for cid, value in rows if value is not None}
    assert shown == {cid: sig4(value * scale) for cid, value in stored.items()}
    assert [value for _, value in rows if value is not None] == sorted(shown.values(), reverse=True)
    best = max(stored, key=lambda cid: stored[cid])
    assert rows[0][0] == best
    graded = {cid for members in result["grades"]["zx90_gate_fidelity"].values() for cid in members}
    assert graded == set(stored)
    assert "95" in result["thresholds"]["zx90_gate_fidelity"]  # the 0.95 threshold in %
    assert result["statistics"]["zx90_gate_fidelity"]["unit"] == unit


def test_chip_wide_couplings_over_the_table_budget_show_extremes(call: Call) -> None:
    everything = call("get_coupling_params")
    assert "table" in everything or "extremes" in everything
    assert set(everything["grades"]) >= {"zx90_gate_fidelity", "bell_state_fidelity"}
    assert "ranked_by" not in everything
