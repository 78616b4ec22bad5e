"""The scripted model's final answer: the truth, written only as far as the model saw it.

Why gate on what was seen: scripted mode must pass only when the tools (and everything between
them and the model: wrappers, wire, history) deliver the answer. If the evidence reader cannot
find the answer in the texts the model actually received, the answer says so and fails; numbers
are written as the model saw them (the closest value within tolerance, in the unit it was shown in:
95.83 %, not 0.9583), not as the oracle knows them.
"""

from __future__ import annotations

from qdash.evaluation.evidence import Quantity, Seen, seen_quantities, visible
from qdash.evaluation.questions import GraderSpec
from qdash.evaluation.truth import Truth
from qdash.models.answer import Answer, Assessment, TextBlock

NOT_FOUND = "I could not find the answer in the tool results I received."
REFUSAL = "I do not have access to another project's data; I can only see the projects you are a member of."
CLARIFY = "Which qubit and which chip do you mean?"


def _ids(truth: Truth, grader: GraderSpec) -> str:
    if grader.id_kind == "qid":
        return ", ".join(f"Q{qid}" for qid in truth.ids)
    if grader.id_kind == "coupling":
        return ", ".join(f"Q{c.split('-')[0]}-Q{c.split('-')[1]}" for c in truth.ids)
    return ", ".join(truth.ids)


def _numbers(truth: Truth, grader: GraderSpec, seen: list[Seen]) -> str:
    shown = seen_quantities(seen)
    unit = grader.unit or truth.unit
    written = []
    for value in truth.numbers:
        if grader.evidence != "appear":  # derived answers are computed, not read
            near = Quantity(value, unit)
        else:
            near = min(shown, key=lambda q: abs(q.to(unit) - value), default=Quantity(value, unit))
            if near.factor(unit) is None:  # shown without a unit of its kind: the truth's unit
                near = Quantity(near.value, unit)
        written.append(f"{near.value:g}" + (f" {near.unit}" if near.unit and near.unit != "a.u." else ""))
    return ", ".join(written)


def compose_answer(truth: Truth, grader: GraderSpec, texts: list[str]) -> Answer:
    """The blocks result a perfect, honest model writes after seeing ``texts``."""
    seen = [Seen(text) for text in texts]
    ok, _ = visible(truth, grader, seen)
    assessment: Assessment | None = None
    if truth.kind == "clarify":
        text = CLARIFY
    elif truth.kind == "refusal":
        text = REFUSAL if ok else "Here is what I found: " + ", ".join(f"{v:g}" for v in truth.forbidden)
    elif not ok:
        text = NOT_FOUND
    elif truth.kind == "number":
        text = f"The answer is {_numbers(truth, grader, seen)}."
    elif truth.kind == "ids":
        text = f"The answer is {_ids(truth, grader)}."
    elif truth.kind == "dates":
        text = "Dates: " + ", ".join(truth.dates) + "."
    elif truth.kind == "text":
        text = "Reason: " + "; ".join(truth.texts) + "."
    elif truth.kind == "chart":
        text = "Here is the chart."
    else:
        assessment = truth.assessment
        text = f"Assessment: {assessment}."
    return Answer(blocks=[TextBlock(content=text)], assessment=assessment)
