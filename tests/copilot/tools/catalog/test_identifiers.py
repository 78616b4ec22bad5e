"""Identifier normalisation: what users type must reach the stored id."""

from __future__ import annotations

import pytest

from qdash.copilot.tools.catalog.identifiers import (
    both_orders,
    canonical_task_name,
    closest_task_names,
    normalize_coupling_id,
    normalize_parameter_name,
    normalize_qid,
    normalize_target,
    qids_of,
)


@pytest.mark.parametrize(
    ("raw", "qid"),
    [("Q16", "16"), ("q16", "16"), ("qubit 16", "16"), ("16", "16"), ("Q00", "0"), (" 7 ", "7"), (3, "3")],
)
def test_qubit_spellings_map_to_the_stored_qid(raw: str | int, qid: str) -> None:
    assert normalize_qid(raw) == qid


@pytest.mark.parametrize("raw", ["", "Q", "16-22", "abc", "q1.5", "x" * 65])
def test_non_qubits_are_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        normalize_qid(raw)


@pytest.mark.parametrize(("raw", "cid"), [("Q16-Q22", "16-22"), ("22-16", "22-16"), ("q03_q4", "3-4")])
def test_coupling_spellings(raw: str, cid: str) -> None:
    assert normalize_coupling_id(raw) == cid


def test_targets_accept_qubits_couplings_and_qubex_labels() -> None:
    assert normalize_target("Q00") == "0"
    assert normalize_target("Q16-Q22") == "16-22"
    with pytest.raises(ValueError):
        normalize_target("Q1-Q2-Q3")


def test_both_orders_and_members() -> None:
    assert both_orders("22-16") == ["22-16", "16-22"]
    assert both_orders("5") == ["5"]
    assert qids_of("16-22") == ("16", "22")


def test_parameter_names_become_snake_case() -> None:
    assert normalize_parameter_name("T1") == "t1"
    assert normalize_parameter_name("Qubit Frequency") == "qubit_frequency"
    assert normalize_parameter_name("x90-gate-fidelity") == "x90_gate_fidelity"
    with pytest.raises(ValueError):
        normalize_parameter_name("t1; drop")


def test_task_names_match_case_insensitively_and_suggest_close_ones() -> None:
    assert canonical_task_name("checkt1") == "CheckT1"
    assert canonical_task_name("CheckT3") is None
    assert closest_task_names("CheckT1x")[0] == "CheckT1"
