"""Every generated value is in range, in the right unit, and obeys the physical constraints."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import pytest

from qdash.demo import DemoLab
from qdash.demo.catalogue import FIDELITY_CAP, FIDELITY_PARAMETERS, TASKS, output_units
from qdash.models import TaskResultHistory, load_topology

RANGES = {
    "qubit_frequency": (4.0 - 0.01, 8.5 + 0.01),
    "readout_frequency": (5.5, 10.5),
    "anharmonicity": (-0.36, -0.19),
    "t1": (3.0, 200.0),
    "t2_echo": (0.5, 200.0),
    "ramsey_frequency": (0.05, 2.0),
    "rabi_frequency": (5.0, 25.0),
    "rabi_amplitude": (0.01, 0.5),
    "hpi_amplitude": (0.01, 0.3),
    "hpi_length": (16.0, 40.0),
    "zx90_gate_time": (100.0, 400.0),
    "cr_amplitude": (0.1, 1.0),
    "cr_phase": (-math.pi, math.pi),
}


@pytest.fixture(scope="module")
def results(demo_lab: DemoLab) -> list[dict[str, Any]]:
    return list(demo_lab.db.task_result_history.find({}))


def test_every_task_result_validates_and_names_equal_keys(results: list[dict[str, Any]]) -> None:
    for doc in results:
        model = TaskResultHistory.from_mongo(doc)
        assert doc["output_parameter_names"] == list(doc["output_parameters"])
        assert model.start_at is not None and model.end_at is not None and model.start_at <= model.end_at
        assert model.start_at.utcoffset() is not None
        assert doc["_id"] == doc["task_id"]


def test_units_are_the_catalogue_units_and_mu_is_greek(results: list[dict[str, Any]]) -> None:
    units = output_units()
    assert units["t1"] == "\u03bcs" and units["t2_star"] == "\u03bcs"
    assert units["hpi_amplitude"] == "" and units["maximum_rabi_frequency"] == "MHz/a.u."
    for doc in results:
        for name, param in doc["output_parameters"].items():
            assert param["unit"] == units[name], (doc["name"], name)
            assert name in {o.name for o in TASKS[doc["name"]].outputs}


def test_values_are_in_range(results: list[dict[str, Any]]) -> None:
    for doc in results:
        for name, param in doc["output_parameters"].items():
            value = param["value"]
            assert math.isfinite(value), (name, value)
            if name in RANGES:
                low, high = RANGES[name]
                assert low <= value <= high, (doc["name"], doc["qid"], name, value)
            if name in FIDELITY_PARAMETERS:
                assert 0.5 <= value <= FIDELITY_CAP, (name, value)
            if name.endswith("_depolarizing_rate") or name == "depolarizing_rate":
                assert value >= 0


def test_relations_between_outputs_of_one_run(results: list[dict[str, Any]]) -> None:
    for doc in results:
        out = {k: v["value"] for k, v in doc["output_parameters"].items()}
        if "average_readout_fidelity" in out:
            f0, f1 = out["readout_fidelity_0"], out["readout_fidelity_1"]
            assert f0 > f1
            assert math.isclose(out["average_readout_fidelity"], (f0 + f1) / 2, abs_tol=1e-9)
        for fidelity, rate in (
            ("average_gate_fidelity", "depolarizing_rate"),
            ("x90_gate_fidelity", "x90_depolarizing_rate"),
            ("x180_gate_fidelity", "x180_depolarizing_rate"),
        ):
            if fidelity in out:
                assert math.isclose(out[rate], 2 * (1 - out[fidelity]), abs_tol=1e-6)
        if "zx90_gate_fidelity" in out:
            assert math.isclose(
                out["zx90_depolarizing_rate"], 4 * (1 - out["zx90_gate_fidelity"]) / 3, abs_tol=1e-6
            )
        if "pi_amplitude" in out:
            assert out["pi_amplitude"] > 0


def test_coherence_constraints_per_execution(results: list[dict[str, Any]]) -> None:
    by_run: dict[tuple[str, str, str, str], dict[str, float]] = defaultdict(dict)
    for doc in results:
        if doc["task_type"] == "qubit" and doc["status"] == "completed" and "source_task_id" not in doc:
            key = (doc["project_id"], doc["chip_id"], doc["execution_id"], doc["qid"])
            by_run[key].update({k: v["value"] for k, v in doc["output_parameters"].items()})
    checked = 0
    for values in by_run.values():
        if "t1" in values and "t2_echo" in values:
            assert values["t2_echo"] <= 2 * values["t1"] + 1e-9
            checked += 1
        if "t2_echo" in values and "t2_star" in values:
            assert values["t2_star"] <= values["t2_echo"] + 1e-9
    assert checked > 500


def test_coupled_qubits_stay_detuned(results: list[dict[str, Any]], demo_lab: DemoLab) -> None:
    freq: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for doc in results:
        if "qubit_frequency" in doc["output_parameters"]:
            key = (doc["project_id"], doc["chip_id"], doc["execution_id"])
            freq[key][doc["qid"]] = doc["output_parameters"]["qubit_frequency"]["value"]
    topologies = {c.chip_id: load_topology(c.topology_id) for c in demo_lab.report.chips}
    pairs = 0
    for (_, chip_id, _), values in freq.items():
        for a, b in topologies[chip_id].couplings:
            if str(a) in values and str(b) in values:
                assert abs(values[str(a)] - values[str(b)]) >= 0.05
                pairs += 1
    assert pairs > 100


def test_failure_skip_and_rerun_rates(results: list[dict[str, Any]]) -> None:
    qubit_runs = [d for d in results if d["task_type"] in ("qubit", "coupling")]
    failed = [d for d in qubit_runs if d["status"] == "failed"]
    skipped = [d for d in qubit_runs if d["status"] == "skipped"]
    assert 0.015 <= len(failed) / len(qubit_runs) <= 0.06
    assert 0.002 <= len(skipped) / len(qubit_runs) <= 0.03
    assert not any(d["output_parameters"] for d in failed), "upstream saves no output of a failed run"
    for doc in skipped:
        assert doc["message"].startswith("Skipped because prerequisite task")
        assert doc["figure_path"] == [] and doc["elapsed_time"] == 0
    reruns = [d for d in results if "source_task_id" in d]
    assert reruns
    ids = {(d["project_id"], d["task_id"]): d for d in results}
    for doc in reruns:
        if doc["source_task_id"] is not None:
            original = ids[(doc["project_id"], doc["source_task_id"])]
            assert (original["name"], original["qid"]) == (doc["name"], doc["qid"])
            assert original["start_at"] < doc["start_at"]


def test_elapsed_times_follow_the_task_kind(results: list[dict[str, Any]]) -> None:
    for doc in results:
        if doc["status"] != "skipped":
            low, high = TASKS[doc["name"]].elapsed_s
            assert low <= doc["elapsed_time"] <= high


def test_special_qubits_tell_their_story(demo_lab: DemoLab) -> None:
    chip = demo_lab.report.chip("proj-demo", "64Qv3")
    db = demo_lab.db

    def t1_series(qid: str) -> list[float]:
        query = {
            "project_id": "proj-demo",
            "chip_id": "64Qv3",
            "qid": qid,
            "name": "CheckT1",
            "status": "completed",
            "source_task_id": {"$exists": False},
        }
        return [
            d["output_parameters"]["t1"]["value"]
            for d in db.task_result_history.find(query).sort("start_at", 1)
        ]

    degrading = t1_series(chip.t1_degrading_qubit)
    assert degrading[-1] < 0.6 * degrading[0]
    first, last = chip.tls_days
    tls_docs = db.task_result_history.find(
        {
            "project_id": "proj-demo",
            "chip_id": "64Qv3",
            "qid": chip.tls_qubit,
            "name": "CheckT1",
            "status": "completed",
        }
    )
    dips = [d for d in tls_docs if first <= d["execution_id"][:8] <= last]
    assert dips and all(d["output_parameters"]["t1"]["value"] <= 15 for d in dips)
    for qid in chip.bad_qubits:
        qubit = db.qubit.find_one({"_id": f"proj-demo:64Qv3:{qid}"})
        assert qubit is not None
        assert qubit["data"]["x90_gate_fidelity"]["value"] < 0.98
