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

from qdash.copilot.tools.catalog.metrics import QUBIT_METRICS

Kind = Literal["heatmap", "figure", "lost", "failed_tasks", "qubit", "task_analysis", "unknown"]

_CONTEXT_PREFIX = "Context: chip"
ANALYSIS_PREFIX = "Result under analysis: "
"""How the assistant opens an analysis turn (``prompts.analysis.render_analysis_context``)."""
_LOSS_WORDS = ("lost", "lose", "losing", "drop", "degrad", "decreas", "worse", "declin", "trend")
_FAIL_WORDS = ("fail", "error")
_QID = re.compile(r"(?<![a-z0-9])q(?:ubit)?[\s_-]?(\d{1,3})(?![0-9])")


@dataclass(frozen=True)
class Question:
    """The intent of one question: what to look up, for which metric or qubit."""

    kind: Kind
    metric: str | None = None
    qid: str | None = None
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


def find_metric(text: str) -> str | None:
    """The first qubit metric the text names (``"T2-echo"`` → ``t2_echo``), else ``None``."""
    normalised = _normalise(text)
    for spelling, metric in _ALIASES:
        if re.search(rf"(?<![a-z0-9]){re.escape(spelling)}(?![a-z0-9])", normalised):
            return metric
    return None


def strip_context(text: str) -> str:
    """The user's own words: the assistant prefixes a ``Context: chip …`` note (with parameters)."""
    if text.startswith(_CONTEXT_PREFIX) and "\n\n" in text:
        return text.split("\n\n", 1)[1]
    return text


def read_question(text: str) -> Question:
    """Classify a question; ``unknown`` when no plan fits."""
    if text.startswith(ANALYSIS_PREFIX):
        return Question("task_analysis", context=text)
    words = strip_context(text).lower()
    metric = find_metric(words)
    if "heatmap" in words or "heat map" in words:
        return Question("heatmap", metric or "t1")
    qid = _QID.search(words)
    if "figure" in words:
        return Question("figure", metric or "t1", str(int(qid.group(1))) if qid else None)
    if metric and any(word in words for word in _LOSS_WORDS):
        return Question("lost", metric)
    if any(word in words for word in _FAIL_WORDS):
        return Question("failed_tasks")
    if qid:
        return Question("qubit", metric, str(int(qid.group(1))))
    return Question("unknown", metric)
