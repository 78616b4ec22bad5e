"""Deriving a run's input entities: roles of 2-qubit tasks resolve to the control/target qubit."""

from __future__ import annotations

from qdash.copilot.tools.catalog.lineage_graph import activity_of, input_entities, split_entity


def test_entity_parts_and_generating_activity() -> None:
    assert split_entity("t1:16:20260227-001:abc") == ("t1", "16", "20260227-001", "abc")
    assert activity_of("cr_phase:16-22:20260227-002:def") == "20260227-002:def"


def test_inputs_resolve_roles_and_skip_values_without_a_producer() -> None:
    def param(name: str, role: str, execution: str, task: str) -> dict[str, str]:
        return {"parameter_name": name, "qid_role": role, "execution_id": execution, "task_id": task}

    run = {
        "qid": "16-22",
        "input_parameters": {
            "control_qubit_frequency": param("qubit_frequency", "control", "E1", "A"),
            "target_qubit_frequency": param("qubit_frequency", "target", "E1", "B"),
            "cr_amplitude": param("", "coupling", "E2", "C"),
            "readout_length": param("readout_length", "", "", ""),
        },
    }
    assert input_entities(run) == [
        "qubit_frequency:16:E1:A",
        "qubit_frequency:22:E1:B",
        "cr_amplitude:16-22:E2:C",
    ]
    single = {"qid": "3", "input_parameters": {"t1": {"execution_id": "E", "task_id": "T"}}}
    assert input_entities(single) == ["t1:3:E:T"]
