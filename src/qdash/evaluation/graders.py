"""Deterministic graders of a final answer (the blocks result a user sees), no model involved.

One grader per ``grader.type``: a number within tolerance in the stated unit (other units of the
same kind converted, ``%`` for fractions), a set of ids equal to / containing the truth, the dates,
phrases, a chart of the right kind, the assessment value, a refusal that leaks nothing, one
clarifying question. Free text is read generously (``Q05``, ``qubit 5``, ``qubits 3, 17 and 32``,
``Nov 22``, ``45.2 μs`` or ``45 200 ns``) but never guessed at.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date

from qdash.evaluation.matching import (
    COMPACT_DATE,
    EXECUTION,
    ISO_DATE,
    UNIT_FACTORS,
    canonical,
    dates_in,
    normalise_id,
    within,
)
from qdash.evaluation.questions import GraderSpec, IdKind
from qdash.evaluation.truth import Truth
from qdash.models.answer import Answer, ChartBlock, TextBlock

NUMBER_WITH_UNIT = re.compile(
    r"(?<![\w.])(-?\d+(?:[.,]\d+)?(?:[eE][-+]?\d+)?)\s*(μs|µs|us|ns|ms|GHz|MHz|kHz|%|a\.u\.)?",
)
QUBIT_TOKEN = re.compile(r"\bQ(\d{1,3})\b", re.IGNORECASE)
QUBIT_LIST = re.compile(r"\bqubits?\s+((?:\d{1,3}(?:\s*(?:,|and|&|or)\s*)?)+)", re.IGNORECASE)
COUPLING_TOKEN = re.compile(r"\bQ?(\d{1,3})\s*[-–]\s*Q?(\d{1,3})\b", re.IGNORECASE)
REFUSAL = re.compile(
    r"(no access|not (?:a )?member|don't have access|do not have access|cannot access|can't access|"
    r"not available to you|only (?:see|access)|outside (?:your|this) project|another project|"
    r"not authori[sz]ed|no data (?:for|from|about) (?:that|this|the other|another))",
    re.IGNORECASE,
)


@dataclass
class AnswerSheet:
    """What the user got: the text of the answer's text blocks, its charts and its assessment."""

    text: str
    chart_types: list[str] = field(default_factory=list)
    assessment: str | None = None

    @classmethod
    def from_result(cls, answer: Answer) -> AnswerSheet:
        """From the answer the SSE ``result`` carried: its text blocks, its charts' trace types."""
        texts = [block.content for block in answer.blocks if isinstance(block, TextBlock)]
        charts = [
            str(trace.get("type", "scatter"))
            for block in answer.blocks
            if isinstance(block, ChartBlock)
            for trace in block.chart.get("data") or []
            if isinstance(trace, dict)
        ]
        return cls("\n\n".join(texts), charts, answer.assessment)


NOT_QUANTITIES = (
    ISO_DATE,
    COMPACT_DATE,
    EXECUTION,
    COUPLING_TOKEN,
    re.compile(r"\bQ\d{1,3}\b", re.IGNORECASE),
)
"""Dates, execution ids and qubit/coupling labels hold digits that are not answers' numbers."""


def numbers_in(text: str, unit: str) -> list[float]:
    """Numbers written in ``text``, converted to ``unit`` when written with a known other unit."""
    for pattern in NOT_QUANTITIES:
        text = pattern.sub(" ", text)
    factors = UNIT_FACTORS.get(unit, {})
    found: list[float] = []
    for raw, written_unit in NUMBER_WITH_UNIT.findall(text):
        value = float(raw.replace(",", "."))
        factor = factors.get(written_unit, 1.0) if written_unit else 1.0
        found.append(value * factor)
    return found


def ids_in(text: str, kind: IdKind) -> set[str]:
    """Ids of ``kind`` written in free text."""
    if kind == "execution":
        return set(EXECUTION.findall(text))
    if kind == "coupling":
        return {f"{min(int(a), int(b))}-{max(int(a), int(b))}" for a, b in COUPLING_TOKEN.findall(text)}
    if kind == "name":  # snake_case identifiers (parameter and task names), however spaced
        return {word.lower() for word in re.findall(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b", text)}
    text = COUPLING_TOKEN.sub(" ", text)
    found = {str(int(q)) for q in QUBIT_TOKEN.findall(text)}
    for listed in QUBIT_LIST.findall(text):
        found |= {str(int(n)) for n in re.findall(r"\d{1,3}", listed)}
    return {q for q in found if normalise_id("qid", q) is not None}


def question_count(text: str) -> int:
    """Sentences that end in a question mark."""
    return len(re.findall(r"\?(?:\s|$|\*|\))", text + " "))


def grade(truth: Truth, grader: GraderSpec, answer: AnswerSheet) -> tuple[bool, str]:
    """Whether ``answer`` is correct, and what was wrong."""
    text = answer.text
    kind = grader.type
    if kind == "chart":
        return truth.chart in answer.chart_types, f"charts {answer.chart_types or 'none'}"
    if kind == "assessment":
        return answer.assessment == truth.assessment, f"assessment {answer.assessment}"
    if kind == "clarify":
        asked = question_count(text)
        return asked == 1, f"{asked} question(s) asked"
    if kind == "refusal":
        numbers = numbers_in(text, "")
        leaked = [f for f in truth.forbidden if any(math.isclose(n, float(f), rel_tol=5e-4) for n in numbers)]
        if leaked:
            return False, f"leaked {leaked}"
        refused = bool(REFUSAL.search(text))
        return refused, "refused" if refused else "no refusal phrase"
    if kind == "number":
        numbers = numbers_in(text, grader.unit or truth.unit)
        missing = [t for t in truth.numbers if not any(within(n, t, grader) for n in numbers)]
        return not missing, f"missing {missing}" if missing else "numbers match"
    if kind in ("ids_equal", "ids_contain"):
        given, wanted = ids_in(text, grader.id_kind), canonical(grader.id_kind, truth.ids)
        if grader.id_kind == "name":  # "qubit frequency" names qubit_frequency too
            given |= {name for name in wanted if name.replace("_", " ") in text.lower()}
        ok = given == wanted if kind == "ids_equal" else wanted <= given
        return ok, f"answered {sorted(given)}"
    if kind == "dates":
        year = int(truth.dates[0][:4])
        given_dates = dates_in(text, year)
        missing_dates = [d for d in truth.dates if date.fromisoformat(d) not in given_dates]
        return not missing_dates, f"missing dates {missing_dates}" if missing_dates else "dates match"
    lowered = text.lower()
    missing_texts = [t for t in truth.texts if t.lower() not in lowered]
    return not missing_texts, f"missing {missing_texts}" if missing_texts else "text matches"
