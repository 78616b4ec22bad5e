"""Counts over a time window, from the raw run and execution documents.

Definitions (the lab's, written here, not the tools'): a window is ``since <= start_at`` (of the run,
or of the execution) up to now; a run a person excluded (``excluded: true``) is not counted; "most"
means the largest number of runs, every id tied at the top being an answer.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from qdash.demo import SeedReport
from qdash.evaluation.oracle.answers import answer
from qdash.evaluation.oracle.raw import Doc, RawLab
from qdash.evaluation.truth import Truth

_FIELDS = {"qid": "qid", "task": "name", "execution": "execution_id"}


def _since(text: str) -> datetime:
    """An ISO time as written in a question (``…T00:00Z``); without a zone, UTC."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def window_runs(raw: RawLab, chip: str, since: str, status: str | None) -> list[Doc]:
    query: Doc = {"start_at": {"$gte": _since(since)}}
    if status is not None:
        query["status"] = status
    return [run for run in raw.runs(chip, query) if run.get("excluded") is not True]


@answer
def window_count(
    raw: RawLab, report: SeedReport, *, chip: str, since: str, status: str | None = None
) -> Truth:
    """How many runs (of ``status``) started since ``since``."""
    return Truth(kind="number", numbers=[len(window_runs(raw, chip, since, status))])


@answer
def window_status_counts(
    raw: RawLab, report: SeedReport, *, chip: str, since: str, statuses: list[str]
) -> Truth:
    """How many runs of each of ``statuses`` started since ``since``, in that order."""
    counts = Counter(str(run["status"]) for run in window_runs(raw, chip, since, None))
    return Truth(kind="number", numbers=[counts[status] for status in statuses])


@answer
def window_top(raw: RawLab, report: SeedReport, *, chip: str, since: str, status: str, by: str) -> Truth:
    """The qubit(s), task(s) or execution(s) with the most runs of ``status`` since ``since``."""
    counts = Counter(str(run[_FIELDS[by]]) for run in window_runs(raw, chip, since, status))
    if not counts:
        raise LookupError(f"no {status} runs on {chip} since {since}")
    most = max(counts.values())
    top = sorted(key for key, n in counts.items() if n == most)
    if by == "task":
        return Truth(kind="text", texts=top)
    return Truth(kind="ids", ids=top, candidates=len(counts))


@answer
def window_names(raw: RawLab, report: SeedReport, *, chip: str, since: str, status: str) -> Truth:
    """The tasks with at least one run of ``status`` since ``since``."""
    names = {str(run["name"]) for run in window_runs(raw, chip, since, status)}
    return Truth(kind="text", texts=sorted(names))


@answer
def executions_since(raw: RawLab, report: SeedReport, *, chip: str, since: str) -> Truth:
    """How many executions of the chip started since ``since``."""
    started = raw.find("execution_history", {"chip_id": chip, "start_at": {"$gte": _since(since)}})
    return Truth(kind="number", numbers=[len(started)])
