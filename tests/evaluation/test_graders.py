"""Graders read final answers generously but exactly: units, id spellings, dates, refusals, questions."""

from __future__ import annotations

from qdash.evaluation.graders import AnswerSheet, grade, ids_in, numbers_in, question_count
from qdash.evaluation.questions import GraderSpec
from qdash.evaluation.truth import Truth
from qdash.models.answer import Answer, Assessment, ChartBlock

T1 = Truth(kind="number", numbers=[45.21], unit="μs")
T1_GRADER = GraderSpec(type="number", unit="μs", rel_tol=0.01)


def answer(text: str, assessment: Assessment | None = None) -> AnswerSheet:
    return AnswerSheet.from_result(Answer.text(text).model_copy(update={"assessment": assessment}))


def test_numbers_in_other_units_are_converted() -> None:
    assert grade(T1, T1_GRADER, answer("T1 of Q16 is 45.2 µs."))[0]
    assert grade(T1, T1_GRADER, answer("T1 is 45210 ns"))[0]
    assert not grade(T1, T1_GRADER, answer("T1 is 47 μs"))[0]
    fidelity = Truth(kind="number", numbers=[0.9339], unit="a.u.")
    assert grade(fidelity, GraderSpec(type="number", unit="a.u.", abs_tol=5e-4), answer("It is 93.39 %."))[0]
    assert numbers_in("Q16 on 2026-11-22", "") == []


def test_qubit_ids_in_every_spelling_and_not_from_couplings() -> None:
    assert ids_in("Q03, Q17 and qubit 32", "qid") == {"3", "17", "32"}
    assert ids_in("qubits 4, 5 and 14 are below", "qid") == {"4", "5", "14"}
    assert ids_in("the coupling Q16-Q02 is weak", "qid") == set()
    assert ids_in("the coupling Q16-Q02 is weak", "coupling") == {"2-16"}
    equal = GraderSpec(type="ids_equal", id_kind="qid")
    truth = Truth(kind="ids", ids=["3", "17"])
    assert grade(truth, equal, answer("Q3 and Q17"))[0]
    assert not grade(truth, equal, answer("Q3, Q17 and Q20"))[0]
    assert grade(truth, GraderSpec(type="ids_contain"), answer("Q3, Q17 and Q20"))[0]


def test_parameter_names_with_or_without_underscores() -> None:
    truth = Truth(kind="ids", ids=["qubit_frequency"])
    grader = GraderSpec(type="ids_equal", id_kind="name")
    assert grade(truth, grader, answer("It was derived from the qubit frequency."))[0]
    assert not grade(truth, grader, answer("From qubit_frequency and readout_amplitude."))[0]


def test_dates_written_in_words_or_iso() -> None:
    truth = Truth(kind="dates", dates=["2026-11-22", "2026-11-23"])
    grader = GraderSpec(type="dates")
    assert grade(truth, grader, answer("The dip lasted from Nov 22 to 23 November."))[0]
    assert grade(truth, grader, answer("2026-11-22 and 2026-11-23"))[0]
    assert not grade(truth, grader, answer("Only on 2026-11-22"))[0]


def test_chart_assessment_refusal_and_clarifying_question() -> None:
    heatmap = Answer(blocks=[ChartBlock(chart={"data": [{"type": "heatmap"}]})])
    assert grade(
        Truth(kind="chart", chart="heatmap"), GraderSpec(type="chart"), AnswerSheet.from_result(heatmap)
    )[0]
    assert not grade(Truth(kind="chart", chart="heatmap"), GraderSpec(type="chart"), answer("no chart"))[0]
    bad = Truth(kind="assessment", assessment="bad")
    assert grade(bad, GraderSpec(type="assessment"), answer("Failed fit.", assessment="bad"))[0]
    assert not grade(bad, GraderSpec(type="assessment"), answer("Looks fine.", assessment="good"))[0]
    refusal = Truth(kind="refusal", forbidden=[12.345])
    refuse = GraderSpec(type="refusal")
    assert grade(refusal, refuse, answer("I do not have access to that project's data."))[0]
    assert not grade(refusal, refuse, answer("I do not have access, but T1 is 12.35 μs."))[0]
    assert not grade(refusal, refuse, answer("T1 is 80 μs."))[0]
    assert question_count("Which qubit do you mean?") == 1
    assert not grade(Truth(kind="clarify"), GraderSpec(type="clarify"), answer("Which qubit? Which chip?"))[0]
