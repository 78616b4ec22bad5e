"""Every run of a chip inside a time window, by the run's own start.

Why the run's own time: counting "failed runs since Monday" needs every run of the window,
including the runs of an execution that began days before it (a long scan, a resumed flow); a walk
over executions bounded by their start had to guess how long an execution lasts, and missed those.
The runs are read with one range on ``start_at`` (MongoDB: the ``chip_id, start_at`` index, or with
a task the ``name, status, start_at`` one; the embedded store: its time-range map, ``db/ranges.py``),
so the cost follows the runs inside the window, not the history kept. The executions that started
in the window are read the same way from ``execution_history``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from qdash.models.common import elapsed_seconds
from qdash.repositories.executions import EXECUTION_FIELDS, EXECUTIONS
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import (
    SEARCH_FIELDS,
    TASK_RESULTS,
    Runs,
    is_excluded,
    search_filter,
)

RUN_FIELDS = {
    name: 1
    for name in SEARCH_FIELDS
    if name not in ("end_at", "elapsed_time", "output_parameters", "figure_path", "json_figure_path")
}
"""What counting needs of each run (its outputs are read only for the runs shown)."""
_EPOCH = datetime.min.replace(tzinfo=UTC)
_NEWEST_FIRST = [("start_at", -1)]


def moment(value: object) -> datetime:
    """A stored time as an aware UTC datetime (naive = UTC, as upstream writes them)."""
    if not isinstance(value, datetime):
        return _EPOCH
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass
class Window:
    """The runs of a window (newest first, excluded ones counted) and the executions that started
    inside it (newest first)."""

    runs: Runs = field(default_factory=Runs)
    executions: list[Doc] = field(default_factory=list)


def runs_in_window(
    scope: ProjectScope,
    chip_id: str,
    since: datetime,
    until: datetime,
    *,
    task_name: str | None = None,
    qids: list[str] | None = None,
    status: str | None = None,
    execution_id: str | None = None,
    review_states: list[str] | None = None,
) -> Window:
    """Runs with ``since <= start_at < until`` matching the filters (``qids``: the spellings of one
    qubit or coupling; ``review_states``: the ``ai_review.status`` values a review filter needs, so
    runs never reviewed are not read), any status, by the query of ``task_results.search_filter``."""
    window = {"$gte": since, "$lt": until}
    filters = search_filter(chip_id, task_name=task_name, qids=qids, status=status, execution_id=execution_id)
    query = {"chip_id": chip_id, "start_at": window, **filters}
    if review_states:
        query["ai_review.status"] = {"$in": review_states}
    found = Window()
    _keep(found.runs, scope.iter_find(TASK_RESULTS, query, RUN_FIELDS, batch_size=1000), since, until)
    found.runs.sort(key=lambda doc: moment(doc.get("start_at")), reverse=True)  # all are read: no index sort
    found.executions = executions_in_window(
        scope, chip_id, since, until, fields=("execution_id", "status", "start_at")
    )
    return found


def executions_in_window(
    scope: ProjectScope,
    chip_id: str,
    since: datetime,
    until: datetime,
    *,
    tags: list[str] | None = None,
    fields: Iterable[str] = EXECUTION_FIELDS,
) -> list[Doc]:
    """The executions that started with ``since <= start_at < until`` (with all of ``tags``), newest
    first: one range on the ``chip_id, start_at`` index (a chip runs a few a day, so all are read)."""
    query: Doc = {"chip_id": chip_id, "start_at": {"$gte": since, "$lt": until}}
    if tags:
        query["tags"] = {"$all": tags}
    found = scope.find(EXECUTIONS, query, dict.fromkeys(fields, 1), sort=_NEWEST_FIRST)
    for doc in found:
        if "elapsed_time" in doc:
            doc["elapsed_time"] = elapsed_seconds(doc.get("elapsed_time"))
    return found


def _keep(runs: Runs, docs: Iterable[Doc], since: datetime, until: datetime) -> None:
    """Append the runs inside the window to ``runs``, counting the excluded ones."""
    for doc in docs:
        if not since <= moment(doc.get("start_at")) < until:
            continue
        if is_excluded(doc):
            runs.excluded += 1
            continue
        runs.append(doc)
