"""The ground truth of one question, as the oracle states it and the graders read it.

Kept apart from the oracle so graders and reports depend on this small value type only.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from qdash.models.answer import Assessment

TruthKind = Literal["number", "ids", "dates", "text", "chart", "assessment", "refusal", "clarify"]


class Selection(BaseModel):
    """A rule that picks ids from per-id values: a threshold, the k lowest/highest, or a count.

    The oracle applies it to raw documents; ``records`` evidence applies it to what the model saw.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    parameter: str
    op: Literal["<", "<=", ">", ">=", "lowest", "highest"]
    value: float = 0.0
    """Threshold (stored units) for comparisons; k for lowest/highest."""
    unit: str = ""
    """The parameter's stored unit, set by the oracle from the documents: values shown in another
    unit of its kind (fidelities in %) are converted to it before the rule is applied."""
    count: bool = False
    """The answer is how many ids match, not which."""
    target: Literal["qubit", "coupling"] = "qubit"
    within: list[str] = Field(default_factory=list)
    """Only these ids compete (e.g. the couplings of one qubit); empty = all."""

    def pick(self, values: dict[str, float]) -> list[str]:
        """The ids this rule selects from ``values`` (id → value)."""
        pool = {key: v for key, v in values.items() if not self.within or key in self.within}
        if self.op in ("lowest", "highest"):
            ranked = sorted(pool, key=lambda key: (pool[key], key), reverse=self.op == "highest")
            return ranked[: int(self.value)]
        compare: Callable[[float, float], bool] = {
            "<": operator.lt,
            "<=": operator.le,
            ">": operator.gt,
            ">=": operator.ge,
        }[self.op]
        return sorted((key for key, v in pool.items() if compare(v, self.value)), key=_id_order)


def _id_order(key: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in key.split("-"))


class Truth(BaseModel):
    """What a correct answer contains; only the fields of ``kind`` are set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: TruthKind
    numbers: list[float] = Field(default_factory=list)
    """Every number must be given (e.g. first and latest T1)."""
    unit: str = ""
    ids: list[str] = Field(default_factory=list)
    """Normalised ids (qid ``"16"``, coupling ``"16-22"``, execution id, parameter or task name)."""
    dates: list[str] = Field(default_factory=list)
    """``YYYY-MM-DD``; a range is its first and last date."""
    texts: list[str] = Field(default_factory=list)
    """Phrases a correct answer contains (case-insensitive), e.g. a failure message."""
    chart: str | None = None
    """Plotly trace type the answer's chart must have, e.g. ``heatmap``."""
    assessment: Assessment | None = None
    forbidden: list[Any] = Field(default_factory=list)
    """Values from another project that must never appear (refusal questions)."""
    selection: Selection | None = None
    candidates: int = 0
    """How many ids compete (e.g. qubits on the chip): ``records`` evidence needs them all."""
    subject: str = ""
    """The id the question is about (``pairs`` evidence: whose neighbours)."""

    def describe(self) -> str:
        """One short line for reports."""
        if self.kind == "number":
            return ", ".join(f"{n:g}" for n in self.numbers) + (f" {self.unit}" if self.unit else "")
        if self.kind == "ids":
            return ", ".join(self.ids) or "(none)"
        if self.kind == "dates":
            return " … ".join(self.dates)
        if self.kind == "text":
            return "; ".join(self.texts)
        if self.kind == "chart":
            return f"a {self.chart} chart"
        if self.kind == "assessment":
            return f"assessment {self.assessment}"
        if self.kind == "refusal":
            return "refuse: another project's data"
        return "ask one clarifying question"
