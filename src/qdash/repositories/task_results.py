"""Queries on ``task_result_history``, the per-run history (the large collection).

Every query here has an equality prefix + sort that an index of ``qdash.db.indexes`` serves
(``tests/copilot/tools/test_query_indexes.py`` checks it), and reads with a limit or streams so
callers can stop early: at lab scale (365 days × 144 qubits) this collection holds millions of
documents, and the embedded store scans every document per query.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Required, TypedDict

from qdash.models.common import elapsed_seconds
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.upstream_values import EPOCH, as_utc

TASK_RESULTS = "task_result_history"
COMPLETED = "completed"
STATUSES = ("scheduled", "running", "completed", "failed", "pending", "skipped", "cancelled")
_NEWEST_FIRST = [("start_at", -1)]
SEARCH_FIELDS = {
    "task_id": 1,
    "name": 1,
    "qid": 1,
    "status": 1,
    "execution_id": 1,
    "start_at": 1,
    "end_at": 1,
    "elapsed_time": 1,
    "output_parameters": 1,
    "message": 1,
    "figure_path": 1,
    "json_figure_path": 1,
    "excluded": 1,
    "ai_review_note.content": 1,
    "ai_review.status": 1,
    "ai_review.error": 1,
}
"""The fields a task search shows of each run (its AI review: upstream's note and request state)."""
# Above ~200 point intervals MongoDB stops merge-sorting an $in and sorts in memory; chunk below it.
QID_CHUNK = 128


class Runs(list[Doc]):
    """Runs, newest first, plus how many excluded runs were skipped inside the same window.

    Upstream QDash lets a person mark a measurement ``excluded`` (with ``excluded_reason``/``_by``/
    ``_at``): it stays in the database but leaves every metric. Skipping those rows while streaming
    (instead of a ``$ne`` in the query) keeps each query on its index and lets tools say how many
    rows were left out, so an answer never silently differs from what the dashboard shows.
    """

    def __init__(self, docs: Iterable[Doc] = (), excluded: int = 0) -> None:
        super().__init__(docs)
        self.excluded = excluded


class PointsWindow(TypedDict, total=False):
    """Which points :func:`points_per_qid` (and ``recent_points.newest_points``, which takes the same
    keywords) reads per qid."""

    per_qid: Required[int | None]
    since: datetime | None
    cooldown_id: str | None


class PointsPerQid(dict[str, list[Doc]]):
    """Runs per qid (see :func:`points_per_qid`) plus the number of excluded runs skipped."""

    excluded: int = 0


def is_excluded(doc: Doc) -> bool:
    """Whether a person removed this measurement from metrics (upstream's ``excluded`` flag)."""
    return doc.get("excluded") is True


def cooldown_of(doc: Doc) -> str:
    """The cool-down cycle a run belongs to (upstream's ``cooldown_id``; ``""`` when unassigned)."""
    return str(doc.get("cooldown_id") or "")


class _CooldownWindow:
    """Keeps the runs of one cool-down from a newest-first stream and says when it is over.

    A chip's cool-downs follow each other in time, so once runs of the wanted cycle were seen, a run
    of another (older) cycle ends the window: the stream can stop instead of reading the qid's whole
    history. ``None`` keeps every run.
    """

    def __init__(self, cooldown_id: str | None) -> None:
        self.wanted, self.seen = cooldown_id, False

    def keeps(self, doc: Doc) -> bool:
        if self.wanted is None:
            return True
        if cooldown_of(doc) == self.wanted:
            self.seen = True
            return True
        return False

    def over(self, doc: Doc) -> bool:
        return self.wanted is not None and self.seen and cooldown_of(doc) != self.wanted


def _first_kept(docs: Iterable[Doc], limit: int, *, cooldown_id: str | None = None) -> tuple[Runs, bool]:
    """The first ``limit`` non-excluded runs of ``docs`` (of one cool-down when given), counting the
    excluded ones passed, and whether the window is complete (``limit`` reached or cool-down passed)."""
    runs = Runs()
    window = _CooldownWindow(cooldown_id)
    for doc in docs:
        if window.over(doc):
            return runs, True
        if not window.keeps(doc):
            continue
        if is_excluded(doc):
            runs.excluded += 1
            continue
        runs.append(doc)
        if len(runs) == limit:
            return runs, True
    return runs, False


def _newest_kept(
    scope: ProjectScope, query: Doc, projection: Doc | None, limit: int, cooldown_id: str | None = None
) -> Runs:
    """The newest ``limit`` kept runs (see :func:`_first_kept`) of an index-served query.

    Reads ``limit`` with a query limit (MongoDB stops at it; the embedded store copies only that
    many documents), and reads four times more only while skipped runs (excluded, other cool-downs)
    left the window short. No margin up front: the embedded store copied every run of it and
    nobody saw them (a task's newest 5 failed runs on a qubit copied 13).
    """
    fetch = limit
    while True:
        docs = scope.find(TASK_RESULTS, query, projection, sort=_NEWEST_FIRST, limit=fetch)
        runs, complete = _first_kept(docs, limit, cooldown_id=cooldown_id)
        if complete or len(docs) < fetch:
            return runs
        fetch *= 4


def qid_filter(qids: list[str]) -> str | Doc:
    """Equality for one id, ``$in`` for the spellings of a coupling (``16-22``/``22-16``)."""
    return qids[0] if len(qids) == 1 else {"$in": qids}


def completed_runs(
    scope: ProjectScope,
    chip_id: str,
    task_name: str,
    qids: list[str],
    limit: int,
    *,
    cooldown_id: str | None = None,
) -> Runs:
    """Newest completed, non-excluded runs of one task on one qid (index name, qid, status, start_at↓),
    of one cool-down when ``cooldown_id`` is given."""
    query = {"chip_id": chip_id, "name": task_name, "qid": qid_filter(qids), "status": COMPLETED}
    return _newest_kept(scope, query, None, limit, cooldown_id)


def parameter_runs(
    scope: ProjectScope,
    chip_id: str,
    parameter_name: str,
    qids: list[str],
    limit: int,
    *,
    cooldown_id: str | None = None,
) -> Runs:
    """Newest completed, non-excluded runs that output ``parameter_name`` on one qid, newest first,
    of one cool-down when ``cooldown_id`` is given."""
    query = {
        "chip_id": chip_id,
        "output_parameter_names": parameter_name,
        "qid": qid_filter(qids),
        "status": COMPLETED,
    }
    projection = parameter_projection(parameter_name)
    return _newest_kept(scope, query, projection, limit, cooldown_id)


def points_per_qid(
    scope: ProjectScope,
    chip_id: str,
    parameter_name: str,
    qids: list[str],
    *,
    per_qid: int | None,
    since: datetime | None = None,
    cooldown_id: str | None = None,
) -> PointsPerQid:
    """Newest completed, non-excluded runs that output ``parameter_name``, up to ``per_qid`` for
    *each* qid (all of them since ``since`` when ``per_qid`` is None), newest first, of one cool-down
    when ``cooldown_id`` is given; ``excluded`` counts the excluded runs met before each qid had its
    points.

    Why not one global limit: upstream used ``last_n × 200`` for the whole chip, so busy qubits
    starved the others and chips above 200 qubits lost data. Here each chunk of ≤ 128 qids is one
    query sorted by ``start_at``↓ (MongoDB merges the per-qid index ranges), streamed and stopped as
    soon as every qid of the chunk has its points.
    """
    projection = parameter_projection(parameter_name)
    found = PointsPerQid()
    for start in range(0, len(qids), QID_CHUNK):
        chunk = qids[start : start + QID_CHUNK]
        query: Doc = {
            "chip_id": chip_id,
            "output_parameter_names": parameter_name,
            "qid": {"$in": chunk},
            "status": COMPLETED,
        }
        if since is not None:
            query["start_at"] = {"$gte": since}
        waiting = len(chunk)
        cursor = scope.iter_find(TASK_RESULTS, query, projection, sort=_NEWEST_FIRST, batch_size=1000)
        for doc in cursor:
            points = found.setdefault(str(doc.get("qid")), [])
            if per_qid is not None and len(points) >= per_qid:
                continue
            if cooldown_id is not None and cooldown_of(doc) != cooldown_id:
                continue
            if is_excluded(doc):
                found.excluded += 1
                continue
            points.append(doc)
            if per_qid is not None and len(points) == per_qid:
                waiting -= 1
                if waiting == 0:
                    break
    for qid in [qid for qid, points in found.items() if not points]:
        del found[qid]
    return found


def search_filter(
    chip_id: str,
    *,
    task_name: str | None,
    qids: list[str] | None,
    status: str | None,
    execution_id: str | None,
) -> Doc:
    """The query of a run search. A task without a status lists every status (``$in``), so an index
    on (…, name, …, status, start_at↓) serves it with a merge of ordered ranges, not a sort."""
    query: Doc = {"chip_id": chip_id}
    if execution_id is not None:
        query["execution_id"] = execution_id
    if task_name is not None:
        query["name"] = task_name
    if qids:
        query["qid"] = qid_filter(qids)
    if status is not None:
        query["status"] = status
    elif task_name is not None:
        query["status"] = {"$in": list(STATUSES)}
    return query


def search(
    scope: ProjectScope,
    chip_id: str,
    *,
    task_name: str | None,
    qids: list[str] | None,
    status: str | None,
    execution_id: str | None,
    limit: int,
) -> Runs:
    """Newest non-excluded runs matching any combination of filters, any status; ``elapsed_time``
    in float seconds whichever form the row stored (the query: :func:`search_filter`)."""
    query = search_filter(chip_id, task_name=task_name, qids=qids, status=status, execution_id=execution_id)
    runs = _newest_kept(scope, query, SEARCH_FIELDS, limit)
    for run in runs:
        run["elapsed_time"] = elapsed_seconds(run.get("elapsed_time"))
    return runs


def execution_matches(
    scope: ProjectScope,
    chip_id: str,
    *,
    task_name: str | None,
    qids: list[str] | None,
    status: str | None,
    execution_id: str,
) -> list[Doc]:
    """Every non-excluded run of one execution matching the filters of :func:`search`, newest first,
    with what counting and failures per task need (no outputs): one equality on ``execution_id``,
    bounded by one execution whatever the history."""
    query = search_filter(chip_id, task_name=task_name, qids=qids, status=status, execution_id=execution_id)
    fields = {"name": 1, "qid": 1, "status": 1, "message": 1, "start_at": 1, "excluded": 1}
    kept = [doc for doc in scope.iter_find(TASK_RESULTS, query, fields) if not is_excluded(doc)]
    return sorted(kept, key=lambda doc: as_utc(doc.get("start_at")) or EPOCH, reverse=True)


def searched_runs(scope: ProjectScope, task_ids: list[str]) -> list[Doc]:
    """What :func:`search` returns of each of these runs (point reads by task id, any order)."""
    runs = list(scope.find_keys(TASK_RESULTS, "task_id", task_ids, SEARCH_FIELDS).values())
    for run in runs:
        run["elapsed_time"] = elapsed_seconds(run.get("elapsed_time"))
    return runs


def parameter_projection(parameter_name: str) -> dict[str, Any]:
    """The fields a parameter's points need: identity, time, exclusion, cool-down and its value."""
    return {
        "qid": 1,
        "name": 1,
        "task_id": 1,
        "execution_id": 1,
        "start_at": 1,
        "excluded": 1,
        "cooldown_id": 1,
        f"output_parameters.{parameter_name}": 1,
    }


def execution_points(
    scope: ProjectScope,
    chip_id: str,
    execution_id: object,
    parameter_name: str,
    projection: dict[str, Any] | None = None,
) -> list[Doc]:
    """The completed runs of one execution that output ``parameter_name`` (the fields a point needs,
    or ``projection``), in no order: one equality on ``execution_id``, bounded by one execution
    whatever the history."""
    query = {
        "chip_id": chip_id,
        "execution_id": execution_id,
        "output_parameter_names": parameter_name,
        "status": COMPLETED,
    }
    return scope.find(TASK_RESULTS, query, projection or parameter_projection(parameter_name))


def runs_by_task_id(scope: ProjectScope, task_ids: list[str]) -> dict[str, Doc]:
    """Task runs keyed by ``task_id`` (point reads), with what a provenance walk needs."""
    projection = {"qid": 1, "name": 1, "execution_id": 1, "input_parameters": 1}
    return scope.find_keys(TASK_RESULTS, "task_id", task_ids, projection)


def producing_runs(scope: ProjectScope, task_ids: Iterable[str]) -> dict[str, Doc]:
    """``{task_id: {status, message, excluded, excluded_reason}}`` of these runs: one point read per
    run, so meant for the runs behind current values (one per value, a few hundred for a chip).

    By ``_id`` first (ours), then by ``task_id`` equality one at a time (upstream's ObjectId
    documents, or a producer that is not in the history): an ``$in`` would make the embedded store
    test every run of the collection. A run not in the history is left out.
    """
    wanted = {task for task in task_ids if task}
    projection = {"status": 1, "message": 1, "excluded": 1, "excluded_reason": 1}
    runs = scope.find_keys(TASK_RESULTS, "task_id", wanted, projection, fallback=False)
    for task in wanted - set(runs):
        if (run := scope.find_one(TASK_RESULTS, {"task_id": task}, projection)) is not None:
            runs[task] = run
    return runs


def invalid_reason(run: Doc) -> str | None:
    """Why a value this run wrote cannot be taken at its word (``"failed: R² value too low …"``,
    ``"excluded: bad fit"``), or ``None`` for a completed run nobody excluded."""
    if is_excluded(run):
        reason = str(run.get("excluded_reason") or "")
        return f"excluded: {reason}" if reason else "excluded"
    status = str(run.get("status") or "")
    if status in ("", COMPLETED):
        return None
    message = str(run.get("message") or "")
    return f"{status}: {message[:80]}" if message else status


def excluded_task_ids(scope: ProjectScope, task_ids: Iterable[str]) -> set[str]:
    """Which of these runs a person excluded from metrics (:func:`producing_runs`' point reads)."""
    return {task for task, run in producing_runs(scope, task_ids).items() if is_excluded(run)}


def run_names(scope: ProjectScope, task_ids: Iterable[str]) -> dict[str, Doc]:
    """``{task_id: {"name", "excluded"?}}`` of these runs: one point read each (by ``task_id``), for
    naming the task behind a set of current values and leaving out the ones a person excluded."""
    wanted = {task for task in task_ids if task}
    if not wanted:
        return {}
    return scope.find_keys(TASK_RESULTS, "task_id", wanted, {"name": 1, "excluded": 1})
