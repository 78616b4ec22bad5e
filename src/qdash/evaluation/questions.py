"""The question set: typed models of ``questions.yaml`` and the templating of its facts.

Why a data file: questions, their graders and their ideal plans are reviewed by lab people, not
programmers; the code only validates them (pydantic) and fills ``{placeholders}`` from the
oracle's facts (``{tls}`` = the qubit with the TLS dip in *this* lab), so one file serves any seed
and end date.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

QUESTIONS_FILE = Path(__file__).with_name("questions.yaml")
MORE_QUESTIONS = "questions_*.yaml"
"""Further question files beside the main one (e.g. ``questions_investigation.yaml``), read after it
in name order, so a topic's questions can live in their own file."""

Category = Literal[
    "current_values",
    "rankings_thresholds",
    "changes_over_window",
    "failures",
    "notes",
    "couplings_topology",
    "lineage_provenance",
    "charts",
    "uploaded_csv",
    "analysis_mode",
    "other_project",
    "ambiguous",
    "executions",
    "task_knowledge",
    "figures",
    "counts_window",
    "since_date",
    "couplings_chip",
    "cooldowns",
    "reviews",
    "traps",
]
GraderType = Literal[
    "number", "ids_equal", "ids_contain", "dates", "text", "chart", "assessment", "refusal", "clarify"
]
IdKind = Literal["qid", "coupling", "execution", "name"]
Evidence = Literal["appear", "records", "exclusive", "pairs", "none"]
"""How ``visible`` mode decides that the answer is in what the model saw (see ``evidence.py``)."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GraderSpec(Strict):
    """How a final answer is graded, and how visibility is judged."""

    type: GraderType
    unit: str = ""
    """The unit the truth is stated in (numbers in other units of the same kind are converted)."""
    rel_tol: float = 0.0
    abs_tol: float = 0.0
    id_kind: IdKind = "qid"
    evidence: Evidence = "appear"

    @model_validator(mode="after")
    def _tolerance(self) -> GraderSpec:
        if self.type == "number" and self.rel_tol <= 0 and self.abs_tol <= 0:
            raise ValueError("a number grader needs rel_tol or abs_tol > 0")
        return self


class PlanStep(Strict):
    """One tool call of the ideal plan; string arguments may hold ``{fact}`` placeholders."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class AnalysisTarget(Strict):
    """Analysis-mode questions: which task result the sidebar is open on (placeholders allowed)."""

    task_name: str
    qid: str
    execution_id: str
    task_id: str
    chip_id: str = "{chip}"


class Question(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    category: Category
    text: str
    mode: Literal["chat", "analysis"] = "chat"
    truth: dict[str, Any]
    """``{fn: <oracle function>, ...its arguments}`` (placeholders allowed)."""
    grader: GraderSpec
    plan: list[PlanStep] = Field(default_factory=list)
    analysis: AnalysisTarget | None = None
    upload: str | None = None
    """Name of an uploaded CSV the question needs (the runner uploads the oracle's table)."""

    @model_validator(mode="after")
    def _analysis_target(self) -> Question:
        if (self.mode == "analysis") != (self.analysis is not None):
            raise ValueError(f"{self.id}: analysis mode and an analysis target go together")
        return self


class QuestionSet(Strict):
    questions: list[Question]

    @model_validator(mode="after")
    def _unique(self) -> QuestionSet:
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"question id {question.id!r} appears twice")
            seen.add(question.id)
        return self


DRAFT_MARK = "TODO"
"""What a draft case from feedback (``qdash.feedback.drafts``) holds where the expected answer goes."""


class DraftQuestionError(ValueError):
    """A question file still holds a draft's ``TODO``: grading it would grade against nothing."""


def _has_draft_mark(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_draft_mark(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_draft_mark(item) for item in value)
    return isinstance(value, str) and value == DRAFT_MARK


@cache
def load_questions(path: Path = QUESTIONS_FILE) -> tuple[Question, ...]:
    """The validated question set: ``path`` and the ``questions_*.yaml`` files beside it (cached;
    the files ship with the package). Ids must be unique across the files; a draft still marked
    ``TODO`` is refused with :class:`DraftQuestionError`."""
    questions: list[Any] = []
    for file in [path, *sorted(path.parent.glob(MORE_QUESTIONS))]:
        with file.open(encoding="utf-8") as handle:
            loaded = (yaml.safe_load(handle) or {}).get("questions") or []
        for question in loaded:
            if _has_draft_mark(question):
                name = question.get("id") if isinstance(question, dict) else None
                raise DraftQuestionError(
                    f"{file.name}: question {name!r} is a draft: replace its {DRAFT_MARK} values "
                    "(category, truth, grader) with the expected answer before grading it"
                )
        questions += loaded
    return tuple(QuestionSet.model_validate({"questions": questions}).questions)


def select(questions: tuple[Question, ...], only: list[str] | None) -> list[Question]:
    """Questions whose id or category is in ``only`` (all when empty); unknown names are refused."""
    if not only:
        return list(questions)
    known = {q.id for q in questions} | {q.category for q in questions}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise ValueError(f"unknown question id or category {unknown}; see `qdash eval --list`")
    return [q for q in questions if q.id in only or q.category in only]


PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
"""``{tls}``; other braces (Python code in a plan, ``{'a': 1}``) are left alone."""


def fill(value: Any, facts: dict[str, str]) -> Any:
    """``value`` with every ``{placeholder}`` in its strings replaced from ``facts`` (recursively)."""
    if isinstance(value, str):

        def fact(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in facts:
                raise KeyError(f"unknown placeholder {{{name}}}; facts are: {', '.join(sorted(facts))}")
            return facts[name]

        return PLACEHOLDER.sub(fact, value)
    if isinstance(value, list):
        return [fill(item, facts) for item in value]
    if isinstance(value, dict):
        return {key: fill(item, facts) for key, item in value.items()}
    return value
