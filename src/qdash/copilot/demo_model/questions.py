"""What a question asks, read by keywords: the demo model's only "understanding".

Why keywords: the demo model must answer the configured suggested questions (and close variants)
the same way every time, with no model weights; anything it cannot place is answered with the
list of questions it can. So is a question whose scope its plan would not cover (``in_scope``): a
calendar window, a cause, a second qubit. The metric names are the heatmap tool's, so a matched
metric is always one the tools accept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from qdash.copilot.tools.catalog.identifiers import canonical_task_name
from qdash.copilot.tools.catalog.metrics import QUBIT_METRICS

Kind = Literal[
    "heatmap",
    "figure",
    "lost",
    "failed_tasks",
    "failed_executions",
    "qubit",
    "series",
    "compare_qubits",
    "task_analysis",
    "exclude",
    "undo",
    "unknown",
]

_CONTEXT_PREFIX = "Context: chip"
ANALYSIS_PREFIX = "Result under analysis: "
"""How the assistant opens an analysis turn (``prompts.analysis.render_analysis_context``)."""
_LOSS_WORDS = ("lost", "lose", "losing", "drop", "degrad", "decreas", "worse", "declin", "trend")
_SERIES_WORDS = ("trend", "history", "over time", "evolution", "compare", "versus", " vs", "results", " runs")
GATE_FIDELITIES = ("x90_gate_fidelity", "x180_gate_fidelity", "average_gate_fidelity")
"""What "gate fidelity" without a gate means: every single-qubit gate fidelity the lab stores."""
BARE_T2 = "t2_echo"
"""What a bare "T2" means (T2* is named ``t2_star``); the answer says so."""
METRIC_TASKS = {"t1": "CheckT1", "t2_echo": "CheckT2Echo", "t2_star": "CheckRamsey"}
"""The task whose runs measure a metric: its figure, its failed fits, the run to exclude (failed runs
of another metric are refused: the script knows no task of theirs)."""
_WHY = re.compile(r"\b(why|explain|cause[sd]?|reason|should|recommend|predict)\b")
"""A question that asks for a reason or advice: the demo can only quote stored values."""
_EXECUTION = re.compile(r"\b\d{8}-\d{3}\b")
_TASK_ID = re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b")
_LATEST = re.compile(r"\b(?:latest|last|newest|most recent)\b")
_NOT_FAILED = re.compile(r"\b(?:did not|didn't|does not|doesn't|not|never|without)\s+fail(?:ed|ing)?\b")
_RUN_WORDS = ("task", "run", "result", "fit", "qubit")
"""Words that make "failed … execution" a question about the runs in it, not the executions."""
_COUPLING = re.compile(r"\bcouplings?\b|(?<![\d-])q?\d{1,3}\s*-\s*q?\d{1,3}(?![\d-])")
_OTHER_SUBJECTS = re.compile(
    r"\b(?:reviews?|reviewed|neighbou?rs?|coupled|topology|versions?|lineage|derived|provenance|source|"
    r"c[oa]me from|produced|notes?|cool-?downs?|projects?|how does|typical(?:ly)?|worst|best|consistently|"
    r"thresholds?|class|chip\s+[a-z0-9_-]*\d[a-z0-9_-]*)\b"
)
"""What no plan reads (AI reviews, topology, lineage, notes, cool-downs, another project or chip,
task knowledge, rankings): a question about it must not get the current values next to it."""
_ISO_SINCE = re.compile(r"\bsince (\d{4}-\d{2}-\d{2}(?:t\d{2}:\d{2}(?::\d{2})?)?z?)")
_WEEK = re.compile(r"\b(?:this|past|the last)\s+week\b")
_SPAN = re.compile(r"\b(?:last|past)\s+(\d{1,3})\s*(days?|hours?|d|h)\b")
_CALENDAR = re.compile(
    r"\b(?:today|yesterday|tonight|this morning|last night|last week|(?:this|last) (?:month|year)|"
    r"since \w+|until \w+|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}|\d{4}-\d{2}-\d{2})\b"
)
"""Windows of the calendar (which day "yesterday" is depends on the lab's time zone, which the
script does not know): no plan covers them."""

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
    window: str | None = None
    """A span back from now the question asks about, as the tools take it (``7d``, ``24h``)."""
    execution_id: str | None = None
    """For ``failed_tasks``: the execution the question names."""
    latest: bool = False
    """For ``failed_tasks``: the question asks about the latest execution."""
    task: str | None = None
    """For ``failed_tasks``: the task it names, or the one that measures its metric (``CheckT1``)."""
    task_id: str | None = None
    """For ``failed_tasks``: the one run it asks about."""
    beyond: str | None = None
    """For ``unknown``: what in the question no plan covers, said in the refusal."""


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
    words = _NOT_FAILED.sub("passed", own.lower())  # "a fit that did not fail" asks for a good value
    return in_scope(_classified(words), words)


def _classified(words: str) -> Question:
    """The plan a question's keywords point to, before its scope is checked."""
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
    if "fail" in words:
        return _failure_question(words, metric, qids)
    metrics, readings = find_metrics(words)
    if len(qids) >= 2:
        return Question("compare_qubits", metric, qids=qids, metrics=metrics, readings=readings)
    changes = any(word in words for word in _SERIES_WORDS) or any(word in words for word in _LOSS_WORDS)
    if len(qids) == 1 and (changes if metric else any(word in words for word in _SERIES_WORDS)):
        return Question("series", metric, qids[0], metrics=metrics, readings=readings)
    if metric and any(word in words for word in _LOSS_WORDS):
        return Question("lost", metric)
    if qid:
        return Question("qubit", metric, str(int(qid.group(1))))
    return Question("unknown", metric)


def _failure_question(words: str, metric: str | None, qids: tuple[str, ...]) -> Question:
    """Failed runs (where, of which qubit and task, or one run), or failed executions."""
    task = _task_named(words)
    if "execution" in words and not task and not any(word in words for word in _RUN_WORDS):
        return Question("failed_executions", latest=bool(_LATEST.search(words)))
    execution, run = _EXECUTION.search(words), _TASK_ID.search(words)
    return Question(
        "failed_tasks",
        metric,
        qids[0] if qids else None,
        qids=qids,
        execution_id=execution.group(0) if execution else None,
        latest=bool(_LATEST.search(words)) and "execution" in words,
        task=task or METRIC_TASKS.get(metric or ""),
        task_id=run.group(0) if run else None,
    )


def _task_named(words: str) -> str | None:
    """The first calibration task the question names (``checkt1`` → ``CheckT1``)."""
    return next(
        (name for word in re.findall(r"[a-z0-9]+", words) if (name := canonical_task_name(word))), None
    )


def find_window(words: str) -> tuple[str | None, str | None]:
    """The span back from now a question names, as the tools take it (``7d``, ``24h``), and the
    words that name a window: ``(None, "yesterday")`` for a calendar window no span states."""
    if week := _WEEK.search(words):
        return "7d", week.group(0)
    if span := _SPAN.search(words):
        return f"{int(span.group(1))}{span.group(2)[0]}", span.group(0)
    if since := _ISO_SINCE.search(words):  # a moment written out: the tools read it in the lab's zone
        return since.group(1).upper(), since.group(0)
    if calendar := _CALENDAR.search(words):
        return None, calendar.group(0)
    return None, None


def in_scope(question: Question, words: str) -> Question:
    """``question`` with the window its plan searches, or ``unknown`` with what in it no plan
    covers: a cause asked for, a window or a qubit its plan would ignore. Why: answering the
    question next to it with a confident assessment is worse than saying what the script can do."""
    if question.kind in ("undo", "exclude"):
        return question
    if question.kind == "unknown":  # still say what in it no plan reads, when something does
        return replace(question, beyond=_beyond_any(words, why_allowed=False))
    span, named = find_window(words)
    beyond = _beyond(question, words, span, named)
    if beyond is not None:
        return Question("unknown", question.metric, beyond=beyond)
    failures = question.kind in ("failed_tasks", "failed_executions")
    return replace(question, window=span, qids=() if failures else question.qids)


def _beyond_failures(question: Question, words: str, span: str | None, named: str | None) -> str | None:
    """What a failure question asks beyond listing and counting the failed runs where it looks."""
    if len(question.qids) > 1:
        named_qids = " and ".join(f"Q{q}" for q in question.qids)
        return f"{named_qids}: I search the failures of one qubit at a time"
    if len(found := _EXECUTION.findall(words)) > 1:
        return f'"{found[1]}": I search one execution at a time'
    if question.metric is not None and question.task is None:
        return f"`{question.metric}`: I search the failed runs of T1, T2 echo and T2* by their task only"
    if named is not None and span is None:
        return f'"{named}": I search a span back from now (this week, the last 3 days, the last 24 hours)'
    if other := re.search(r"\b(?:complet|succe|pass|happen|skip)\w*", words):
        return f'"{other.group(0)}": I search failed runs only'
    if "most" in words and ("qubit" in words or "execution" in words):
        return '"most": I count failed runs by task, not by qubit or execution'
    return None


def _beyond_any(words: str, why_allowed: bool) -> str | None:
    """What no plan reads, whatever the question's kind: a cause, a coupling, another subject."""
    if (asked := _WHY.search(words)) and not why_allowed:  # a failure's "why" is its message
        return f'"{asked.group(0)}": I show stored values; explaining a cause needs a real model'
    if coupling := _COUPLING.search(_TASK_ID.sub(" ", words)):
        return f'"{coupling.group(0)}": I answer about qubits, not couplings'
    if other := _OTHER_SUBJECTS.search(words):
        return f'"{other.group(0)}": none of my scripted answers reads that'
    return None


def _beyond(question: Question, words: str, span: str | None, named: str | None) -> str | None:
    """What in the question its plan would leave out, or ``None`` when the plan answers all of it."""
    kind = question.kind
    if (reason := _beyond_any(words, why_allowed=kind == "failed_tasks")) is not None:
        return reason
    if kind == "failed_tasks":
        return _beyond_failures(question, words, span, named)
    if kind == "failed_executions":
        if question.qids or question.latest or named is not None:
            return f'"{named or "latest"}": I list every failed execution of the chip, nothing narrower'
        return None
    if kind == "lost":
        named = named or next((word for word in ("history", "ever", "all time") if word in words), None)
        return None if named is None or span == "7d" else f'"{named}": I compare the last 7 days only'
    change = next((word for word in _LOSS_WORDS if word in words), None)
    if kind in ("qubit", "compare_qubits", "series") and (task := _task_named(words)):
        return f'"{task}": I show current values and histories of parameters, not the runs of a task'
    if kind in ("qubit", "compare_qubits") and change:
        return f'"{change}": I show current values, not changes'
    if kind in ("qubit", "compare_qubits") and "error" in words:
        return '"error": I show current values, not their fit errors'
    asked = re.search(r"\b(?:how many|dates?|when)\b", words)
    calibrated = re.search(r"\b(?:current|calibrated)\b", words) is not None  # the answer shows when
    if kind == "qubit" and asked and (asked.group(0) == "how many" or not calibrated):
        return f'"{asked.group(0)}": I show current values and when each was calibrated'
    if kind == "figure" and (asked := re.search(r"\bfail\w*|how many|\bexecution\b", words)):
        return f'"{asked.group(0)}": I show the figure of a qubit\'s latest completed run'
    if named is not None:
        shown = "one qubit's last 10 runs" if kind == "series" else "the newest values"
        return f'"{named}": I show {shown}, not a window of time'
    return None
