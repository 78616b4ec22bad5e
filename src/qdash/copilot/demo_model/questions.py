"""What a question asks, read by keywords: the demo model's only "understanding".

Why keywords: the demo model must answer the configured suggested questions (and close variants)
the same way every time, with no model weights; anything it cannot place is answered with the
list of questions it can. The metric names are the heatmap tool's, so a matched metric is always
one the tools accept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from qdash.actions.decisions import DECISION_PREFIX
from qdash.copilot.tools.catalog.metrics import QUBIT_METRICS

Kind = Literal[
    "heatmap",
    "figure",
    "lost",
    "failed_tasks",
    "qubit",
    "series",
    "compare_qubits",
    "task_analysis",
    "exclude",
    "undo",
    "action_decision",
    "unknown",
]

_CONTEXT_PREFIX = "Context: chip"
ANALYSIS_PREFIX = "Result under analysis: "
"""How the assistant opens an analysis turn (``prompts.analysis.render_analysis_context``)."""
_LOSS_WORDS = ("lost", "lose", "losing", "drop", "degrad", "decreas", "worse", "declin", "trend")
_SERIES_WORDS = ("trend", "history", "over time", "evolution", "compare", "versus", " vs")
_BEYOND_WORDS = ("why", "explain", "cause", "reason", "should", "recommend", "predict", "worse", "better")
"""A question about one qubit that asks for a reason or advice: the demo cannot answer it (its
current parameters would be another answer, given without saying so)."""
GATE_FIDELITIES = ("x90_gate_fidelity", "x180_gate_fidelity", "average_gate_fidelity")
"""What "gate fidelity" without a gate means: every single-qubit gate fidelity the lab stores."""
BARE_T2 = "t2_echo"
"""What a bare "T2" means (T2* is named ``t2_star``); the answer says so."""
_FAIL_WORDS = ("fail", "error")

_QID = re.compile(r"(?<![a-z0-9])q(?:ubit)?[\s_-]?(\d{1,3})(?![0-9])")


@dataclass(frozen=True)
class Question:
    """The intent of one question: what to look up, for which metric or qubit."""

    kind: Kind
    metric: str | None = None
    qid: str | None = None
    metrics: tuple[str, ...] = ()
    """For ``series``: every metric the question names, in its order."""
    qids: tuple[str, ...] = ()
    """For ``compare_qubits``: every qubit the question names, in its order."""
    readings: tuple[str, ...] = ()
    """How a loose spelling was read ("T2" as T2 echo), said in the answer."""
    context: str | None = None
    """For ``task_analysis``: the result's facts as the assistant wrote them."""


def _metric_aliases() -> list[tuple[str, str]]:
    """``(spelling, metric)`` pairs, longest spelling first so ``t2_echo`` wins over ``t2``."""
    pairs = {key: key for key in QUBIT_METRICS}
    for key, metric in QUBIT_METRICS.items():
        pairs.setdefault(_normalise(metric.title), key)
    pairs.setdefault("readout_fidelity", "average_readout_fidelity")
    return sorted(pairs.items(), key=lambda pair: -len(pair[0]))


def _normalise(text: str) -> str:
    text = re.sub(r"t2\s*\*", "t2_star", text.lower())
    text = re.sub(r"[()]", "", text)
    return re.sub(r"[\s\-]+", "_", text)


_ALIASES = _metric_aliases()
_SHORTHANDS = {
    "t2": '"T2" is read as T2 echo (`t2_echo`); ask for T2* (`t2_star`) by name.',
    "gate_fidelity": '"Gate fidelity" is read as every single-qubit gate fidelity stored: X90, X180 '
    "and the average.",
}
"""Spellings that are no metric's own (tried after every metric's, so ``t2_echo`` wins), and how
the answer says they were read."""


def find_metric(text: str) -> str | None:
    """The first qubit metric the text names (``"T2-echo"`` → ``t2_echo``), else ``None``."""
    normalised = _normalise(text)
    for spelling, metric in _ALIASES:
        if re.search(rf"(?<![a-z0-9]){re.escape(spelling)}(?![a-z0-9])", normalised):
            return metric
    return None


def find_metrics(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every metric the text names, in the order it names them, and how loose spellings were read:
    a bare "T2" is T2 echo, "gate fidelity" without a gate every gate fidelity."""
    normalised = _normalise(text)
    shorthands = [("t2", (BARE_T2,)), ("gate_fidelity", GATE_FIDELITIES)]
    spellings = [*((spelling, (metric,)) for spelling, metric in _ALIASES), *shorthands]
    found: list[tuple[int, tuple[str, ...]]] = []
    taken: list[tuple[int, int]] = []
    readings: list[str] = []
    for spelling, metrics in spellings:
        for match in re.finditer(rf"(?<![a-z0-9]){re.escape(spelling)}(?![a-z0-9])", normalised):
            start, end = match.span()
            if not any(start < seen_end and seen_start < end for seen_start, seen_end in taken):
                taken.append((start, end))
                found.append((start, metrics))
                if spelling in _SHORTHANDS:
                    readings.append(_SHORTHANDS[spelling])
    ordered = dict.fromkeys(metric for _, metrics in sorted(found) for metric in metrics)
    return tuple(ordered), tuple(dict.fromkeys(readings))


def strip_context(text: str) -> str:
    """The user's own words: the assistant prefixes a ``Context: chip …`` note (with parameters)."""
    if text.startswith(_CONTEXT_PREFIX) and "\n\n" in text:
        return text.split("\n\n", 1)[1]
    return text


def read_question(text: str) -> Question:
    """Classify a question; ``unknown`` when no plan fits."""
    if text.startswith(ANALYSIS_PREFIX):
        return Question("task_analysis", context=text)
    own = strip_context(text)
    if own.startswith(DECISION_PREFIX):
        return Question("action_decision", context=own)
    words = own.lower()
    metric = find_metric(words)
    if "heatmap" in words or "heat map" in words:
        return Question("heatmap", metric or "t1")
    qid = _QID.search(words)
    if "figure" in words:
        return Question("figure", metric or "t1", str(int(qid.group(1))) if qid else None)
    if "exclude" in words and qid:
        return Question("exclude", metric or "t1", str(int(qid.group(1))))
    if re.search(r"\bundo\b", words):
        return Question("undo")
    qids = tuple(dict.fromkeys(str(int(found)) for found in _QID.findall(words)))
    metrics, readings = find_metrics(words)
    if len(qids) >= 2:
        return Question("compare_qubits", metric, qids=qids, metrics=metrics, readings=readings)
    if len(qids) == 1 and any(word in words for word in _SERIES_WORDS):
        return Question("series", metric, qids[0], metrics=metrics, readings=readings)
    if metric and any(word in words for word in _LOSS_WORDS):
        return Question("lost", metric)
    if any(word in words for word in _FAIL_WORDS):
        return Question("failed_tasks")
    if qid and not any(word in words for word in _BEYOND_WORDS):
        return Question("qubit", metric, str(int(qid.group(1))))
    return Question("unknown", metric)
