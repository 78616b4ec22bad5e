"""Every run of a chip inside a time window, read execution by execution.

Why executions: counting "failed runs since Monday" needs every run of the window, and the embedded
store filters a range on ``start_at`` against the chip's whole history (13.5 µs per document: a year
of one 64-qubit chip is 120,000 runs). A chip's runs arrive in executions, so this walks
``execution_history`` newest first (a small collection) and reads each execution's runs by
``execution_id`` (MongoDB: the ``project_id, execution_id`` index; embedded store: its equality
map), stopping at the first execution that started :data:`MAX_EXECUTION_SPAN` before the window.
The cost grows with the runs inside the window, not with the history kept. A chip without
execution documents (imported rows) is read by its ``chip_id, start_at`` range instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from qdash.repositories.executions import EXECUTIONS
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import SEARCH_FIELDS, TASK_RESULTS, Runs, is_excluded, qid_filter

MAX_EXECUTION_SPAN = timedelta(hours=48)
"""How long before the window an execution may have started and still hold runs inside it."""
RUN_FIELDS = {
    name: 1
    for name in SEARCH_FIELDS
    if name not in ("end_at", "elapsed_time", "output_parameters", "figure_path", "json_figure_path")
}
"""What counting needs of each run (its outputs are read only for the runs shown)."""
_EPOCH = datetime.min.replace(tzinfo=UTC)


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
) -> Window:
    """Runs with ``since <= start_at < until`` matching the filters (``qids``: the spellings of one
    qubit or coupling), any status."""
    wanted: Doc = {"name": task_name, "status": status}
    wanted = {key: value for key, value in wanted.items() if value is not None}
    if qids:
        wanted["qid"] = qid_filter(qids)
    found = Window()
    walked = False
    executions = scope.iter_find(
        EXECUTIONS,
        {"chip_id": chip_id},
        {"execution_id": 1, "status": 1, "start_at": 1, "end_at": 1},
        sort=[("start_at", -1)],
        batch_size=64,
    )
    for execution in executions:
        walked = True
        started = moment(execution.get("start_at"))
        if started >= until:
            continue
        if started < since - MAX_EXECUTION_SPAN:
            break
        if since <= started:
            found.executions.append(execution)
        ended = execution.get("end_at")
        if ended is not None and moment(ended) < since:
            continue
        held = execution.get("execution_id")
        if execution_id is not None and held != execution_id:
            continue
        query = {"chip_id": chip_id, "execution_id": held, **wanted}
        _keep(found.runs, scope.iter_find(TASK_RESULTS, query, RUN_FIELDS), since, until)
    if not walked:
        query = {"chip_id": chip_id, "start_at": {"$gte": since, "$lt": until}}
        docs = scope.iter_find(TASK_RESULTS, query, RUN_FIELDS, sort=[("start_at", -1)], batch_size=500)
        plain = {"name": task_name, "status": status, "execution_id": execution_id}
        checks = {key: value for key, value in plain.items() if value is not None}
        matching = (
            doc
            for doc in docs
            if all(doc.get(key) == value for key, value in checks.items())
            and (not qids or str(doc.get("qid")) in qids)
        )
        _keep(found.runs, matching, since, until)
    found.runs.sort(key=lambda doc: moment(doc.get("start_at")), reverse=True)
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
