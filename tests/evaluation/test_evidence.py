"""The evidence reader finds answers in any JSON shape a tool may use, and only real ones."""

from __future__ import annotations

import json

from qdash.evaluation.compose import NOT_FOUND, compose_answer
from qdash.evaluation.evidence import Seen, records, seen_numbers, visible
from qdash.evaluation.graders import AnswerSheet, grade
from qdash.evaluation.questions import GraderSpec
from qdash.evaluation.truth import Selection, Truth

RULE = Selection(parameter="t1", op="<", value=30)
BELOW = Truth(kind="ids", ids=["2", "3"], selection=RULE, candidates=3)
RECORDS = GraderSpec(type="ids_equal", evidence="records")


def seen(value: object) -> list[Seen]:
    return [Seen(json.dumps(value))]


def test_records_from_tables_keyed_dicts_entities_and_pairs() -> None:
    table = {"cols": ["qid", "t1"], "rows": [["1", 40.0], ["2", 10.0], ["3", 20.0]]}
    keyed = {"qubits": {"1": {"t1": {"value": 40.0}}, "2": {"t1": 10.0}, "3": {"t1": 20.0}}}
    entities = {"qubits": [{"qid": "Q01", "data": {"t1": {"value": 40.0}}}, {"qid": "2", "t1": 10.0}]}
    pairs = {"parameter_name": "t1", "lowest": [["2", 10.0], ["3", 20.0]]}
    assert records(seen(table), "t1", "qid") == {"1": 40.0, "2": 10.0, "3": 20.0}
    assert records(seen(keyed), "t1", "qid") == {"1": 40.0, "2": 10.0, "3": 20.0}
    assert records(seen(entities), "t1", "qid") == {"1": 40.0, "2": 10.0}
    assert records(seen(pairs), "t1", "qid") == {"2": 10.0, "3": 20.0}


def test_a_threshold_answer_needs_every_qubit_or_the_exact_list() -> None:
    full = {"cols": ["qid", "t1"], "rows": [["1", 40.0], ["2", 10.0], ["3", 20.0]]}
    assert visible(BELOW, RECORDS, seen(full))[0]
    statistics_only = {"statistics": {"t1": {"min": 10.0}}, "qubits": {"_schema": ["qid", "t1"], "_rows": 3}}
    ok, why = visible(BELOW, RECORDS, seen(statistics_only))
    assert not ok and why == "t1 shown for 0 of 3 ids"
    assert visible(BELOW, RECORDS, seen({"below_threshold": ["Q2", "Q3"]}))[0]
    assert not visible(BELOW, RECORDS, seen({"below_threshold": ["Q2"]}))[0]


def test_numbers_within_tolerance_and_dates_in_tool_forms() -> None:
    number = Truth(kind="number", numbers=[45.213], unit="μs")
    grader = GraderSpec(type="number", rel_tol=0.01)
    assert visible(number, grader, seen({"t1": {"value": 45.21}}))[0]
    assert not visible(number, grader, seen({"t1": {"value": 47.0}}))[0]
    dates = Truth(kind="dates", dates=["2026-11-22", "2026-11-23"])
    compact = seen({"rows": [["11-22 15:03", 9.9], ["11-23 15:08", 13.1]]})
    assert visible(dates, GraderSpec(type="dates"), compact)[0]
    assert not visible(dates, GraderSpec(type="dates"), seen({"rows": [["11-22 15:03", 9.9]]}))[0]


def test_exclusive_evidence_refuses_an_answer_hidden_among_all_qubits() -> None:
    story = Truth(kind="ids", ids=["15"])
    grader = GraderSpec(type="ids_contain", evidence="exclusive")
    assert visible(story, grader, seen({"dipped": ["15"]}))[0]
    ok, why = visible(story, grader, seen({"qids": [str(q) for q in range(64)]}))
    assert not ok and "nothing singles it out" in why


def test_neighbours_from_coupling_pairs_not_from_positions() -> None:
    truth = Truth(kind="ids", ids=["1", "2"], subject="0")
    grader = GraderSpec(type="ids_equal", evidence="pairs")
    topology = {"qubit_positions": {"0": [0, 0], "3": [1, 1]}, "couplings": ["0-1", "0-2", "3-1"]}
    assert visible(truth, grader, seen(topology))[0]
    assert visible(truth, grader, seen({"couplings": [[0, 1], [2, 0]]}))[0]


def test_refusal_evidence_is_a_leak_check() -> None:
    truth = Truth(kind="refusal", forbidden=[12.3456])
    grader = GraderSpec(type="refusal")
    assert visible(truth, grader, seen({"t1": {"value": 80.1}}))[0]
    assert not visible(truth, grader, seen({"t1": {"value": 12.35}}))[0]


FIDELITY = Truth(kind="number", numbers=[0.9583], unit="a.u.")
FRACTION = GraderSpec(type="number", unit="a.u.", abs_tol=0.0005)


def test_a_value_shown_in_percent_matches_a_truth_stored_as_a_fraction() -> None:
    assert visible(FIDELITY, FRACTION, seen({"params": {"f": {"value": 95.83, "unit": "%"}}}))[0]
    assert visible(FIDELITY, FRACTION, seen({"f": {"value": 0.9583, "unit": "a.u."}}))[0]
    ok, why = visible(FIDELITY, FRACTION, seen({"params": {"f": {"value": 91.2, "unit": "%"}}}))
    assert not ok and why == "numbers not shown: [0.9583]"
    tiny = seen({"f": {"value": 0.9583, "unit": "%"}})  # 0.9583 % is 0.009583 a.u.
    assert not visible(FIDELITY, FRACTION, tiny)[0]


def test_units_declared_for_fields_and_whole_results_apply_to_their_numbers() -> None:
    assert seen_numbers(seen({"units": {"f": "%"}, "cols": ["f"], "rows": [[95.83]]}), "a.u.") == [0.9583]
    summary = {
        "statistics": {"f": {"count": 64, "max": 95.83, "unit": "%"}},
        "table": {"cols": ["f"], "rows": [[90]]},
    }
    assert seen_numbers(seen(summary), "a.u.") == [64, 0.9583, 0.9]  # a count beside a unit is not in it
    anharmonicity = seen({"unit": "MHz", "table": {"rows": [[-276.2]], "cols": ["v"]}})
    assert seen_numbers(anharmonicity, "GHz") == [-0.2762]  # the result's unit reaches its table
    assert seen_numbers(seen({"f": {"value": 45.2, "unit": "μs"}}), "a.u.") == [45.2]  # no unit of its kind


def test_a_threshold_over_values_shown_in_percent_uses_the_stored_unit() -> None:
    rule = Selection(parameter="f", op="<", value=0.9, unit="a.u.")
    truth = Truth(kind="ids", ids=["2"], selection=rule, candidates=2)
    table = {"units": {"f": "%"}, "cols": ["qid", "f"], "rows": [["1", 95.1], ["2", 85.0]]}
    assert records(seen(table), "f", "qid", "a.u.") == {"1": 0.951, "2": 0.85}
    assert visible(truth, RECORDS, seen(table))[0]
    entities = {
        "qubits": [
            {"qid": "1", "data": {"f": {"value": 95.1, "unit": "%"}}},
            {"qid": "2", "f": {"value": 0.85, "unit": "a.u."}},
        ]
    }
    assert records(seen(entities), "f", "qid", "a.u.") == {"1": 0.951, "2": 0.85}


def test_the_scripted_answer_writes_a_number_in_the_unit_it_was_shown() -> None:
    shown = [json.dumps({"f": {"value": 95.83, "unit": "%"}})]
    answer = compose_answer(FIDELITY, FRACTION, shown).blocks[0].content
    assert answer == "The answer is 95.83 %."
    assert grade(FIDELITY, FRACTION, AnswerSheet(answer))[0]
    wrong = compose_answer(FIDELITY, FRACTION, [json.dumps({"f": {"value": 91.2, "unit": "%"}})])
    assert wrong.blocks[0].content == NOT_FOUND


def test_digits_of_ids_dates_and_times_inside_strings_are_no_quantities() -> None:
    """A count of 45 is not "shown" by a task id holding ``5a45`` or a time ``04:45``."""
    count = Truth(kind="number", numbers=[45])
    grader = GraderSpec(type="number", abs_tol=0.5)
    names = {"rows": [["d46ae74a-5a45-4fb6-b713-71aca33c72f4", "11-28 04:45", "20261128-045", "2026-11-28"]]}
    ok, why = visible(count, grader, seen(names))
    assert not ok and why == "numbers not shown: [45.0]"
    assert visible(count, grader, seen({**names, "message": "45 runs failed"}))[0]
    assert visible(count, grader, seen({**names, "total": 45}))[0]
