"""The newest points of one parameter for many qids, read execution by execution.

Why: one ``$in`` query over the chip's history, sorted by ``start_at``, is served by an index on
MongoDB but makes the embedded store filter and sort every run the chip ever had (13.5 µs per
document: a year of one 64-qubit chip took seconds). A chip's runs arrive in executions, so the
newest points of every qubit sit in its newest executions: this walks ``execution_history`` newest
first (a small collection) and reads each execution's runs by ``execution_id`` (MongoDB: the
``project_id, execution_id`` index; embedded store: its equality map), stopping once every qid has
its points and no older execution can hold a newer one. The cost grows with the points asked for,
not with the history kept.

The walk reads at most ``per_qid × WALK_PER_POINT + WALK_SLACK`` executions; a qid still short then
(a qubit not calibrated for a long time) gets its points from its own indexed history query.
Whole windows (``per_qid=None``), one cool-down and a chip without execution documents keep the
history stream of ``points_per_qid``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from qdash.repositories.executions import EXECUTIONS
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import (
    PointsPerQid,
    PointsWindow,
    execution_points,
    is_excluded,
    parameter_runs,
    points_per_qid,
)
from qdash.repositories.window import moment

if TYPE_CHECKING:  # typing.Unpack is Python 3.12+; annotations are not evaluated at run time
    from typing_extensions import Unpack

WALK_PER_POINT = 2
WALK_SLACK = 20


def newest_points(
    scope: ProjectScope, chip_id: str, parameter_name: str, qids: list[str], **window: Unpack[PointsWindow]
) -> PointsPerQid:
    """What :func:`points_per_qid` returns (newest first, ``excluded`` counted), read per execution."""
    per_qid, since = window["per_qid"], window.get("since")
    if per_qid is None or window.get("cooldown_id") is not None or not qids:
        return points_per_qid(scope, chip_id, parameter_name, qids, **window)
    kept: dict[str, list[Doc]] = {qid: [] for qid in qids}
    found = PointsPerQid()
    executions = scope.iter_find(
        EXECUTIONS,
        {"chip_id": chip_id},
        {"execution_id": 1, "start_at": 1, "end_at": 1},
        sort=[("start_at", -1)],
        batch_size=64,
    )
    budget = per_qid * WALK_PER_POINT + WALK_SLACK
    exhausted, walked = True, 0
    for walked, execution in enumerate(executions, start=1):
        ended = moment(execution.get("end_at") or execution.get("start_at"))
        if since is not None and ended < since:
            break  # this and every older execution ended before the window
        horizon = _horizon(kept, per_qid)
        if horizon is not None and ended <= horizon:
            break  # every qid is full and this execution ended before the oldest point kept
        if walked > budget:
            exhausted = False
            break
        for doc in execution_points(scope, chip_id, execution.get("execution_id"), parameter_name):
            points = kept.get(str(doc.get("qid")))
            if points is None or (since is not None and moment(doc.get("start_at")) < since):
                continue
            if is_excluded(doc):
                found.excluded += len(points) < per_qid
                continue
            points.append(doc)
    if walked == 0:  # runs without execution documents (imported rows): the history stream
        return points_per_qid(scope, chip_id, parameter_name, qids, per_qid=per_qid, since=since)
    for qid, points in kept.items():
        points.sort(key=lambda doc: moment(doc.get("start_at")), reverse=True)
        newest = points
        if len(points) < per_qid and not exhausted:
            runs = parameter_runs(scope, chip_id, parameter_name, [qid], per_qid)  # its own index range
            found.excluded += runs.excluded
            newest = [doc for doc in runs if since is None or moment(doc.get("start_at")) >= since]
        if newest[:per_qid]:
            found[qid] = newest[:per_qid]
    return found


def _horizon(kept: dict[str, list[Doc]], per_qid: int) -> datetime | None:
    """The oldest start among every qid's newest ``per_qid`` points; ``None`` while a qid is short."""
    oldest: datetime | None = None
    for points in kept.values():
        if len(points) < per_qid:
            return None
        cut = sorted((moment(doc.get("start_at")) for doc in points), reverse=True)[per_qid - 1]
        oldest = cut if oldest is None or cut < oldest else oldest
    return oldest
