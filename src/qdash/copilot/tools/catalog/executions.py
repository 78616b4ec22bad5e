"""``get_execution_history``: the newest workflow runs, one run in detail, or two runs compared.

Why one tool for three questions: "what ran lately", "what happened in 20261120-001" and "what
changed since the previous run" are all about executions; one more optional argument costs the
prompt budget a few tokens where a new tool costs its name, description and schema on every request.

A run in detail reads its execution document and its task runs (one equality on ``execution_id``:
bounded by one execution whatever the history length). Two runs are compared older → newer: per
(qid, parameter) the value of the last completed run in each, the largest changes, per parameter
the median change, and the (task, qid) pairs that failed in one run and not the other.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from qdash.copilot.tools.catalog.args import ChipId, OptFlag, OptText, Tags, ToolArgs, optional_choice
from qdash.copilot.tools.catalog.common import (
    empty_result,
    excluded_note,
    resolve_chip,
    scope_of,
    time_format,
)
from qdash.copilot.tools.catalog.cooldowns import cooldown_list
from qdash.copilot.tools.catalog.counts import window_bounds, window_echo
from qdash.copilot.tools.catalog.formatting import (
    TimeFormat,
    columnar,
    output_value,
    qid_sort_key,
    sig4,
)
from qdash.copilot.tools.catalog.history import failure_summary
from qdash.copilot.tools.catalog.overview import pct1
from qdash.copilot.tools.spec import ToolContext, tool
from qdash.models.task import ExecutionStatus
from qdash.repositories import executions
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import STATUSES, Runs
from qdash.repositories.upstream_values import EPOCH, as_utc
from qdash.repositories.window import executions_in_window
from qdash.units import shown_unit

LISTED_TARGETS = 16
"""A run's qubits and couplings are named up to this many; above it they are counted."""
RANKED = 10
"""Largest changes shown when comparing two runs (every compared value is counted)."""


class ExecutionHistoryArgs(ToolArgs):
    chip_id: ChipId = None
    status: Annotated[ExecutionStatus | None, optional_choice(ExecutionStatus)] = None
    tags: Tags = Field(None, description="all must match")
    last_n: int = Field(10, ge=1, le=50)
    since: OptText = Field(None, description="ISO time or 7d")
    until: OptText = None
    execution_id: OptText = None
    compare_to: OptText = None
    cooldowns: OptFlag = None  # the chip's cool-downs instead (catalog/cooldowns.py)


@tool(label="Fetching execution history")
def get_execution_history(ctx: ToolContext, args: ExecutionHistoryArgs) -> dict[str, Any]:
    """Recent workflow runs (executions); since/until → {window,total,failed}; execution_id →
    {execution,tasks,failures}; + compare_to → {executions,changes,parameters,failed_only_in};
    cooldowns → the chip's cool-downs

    Newest workflow runs (executions) of the chip, or every one that started in a window (the
    window of ``search_task_results``: ``catalog/counts.py``), or one run in detail, or two runs
    compared, or the chip's cool-downs (thermal cycles) with their executions.
    """
    scope = scope_of(ctx)
    if args.cooldowns:
        return cooldown_list(ctx, scope, resolve_chip(scope, args.chip_id))
    if args.execution_id:
        wanted = dict.fromkeys(run_id for run_id in (args.execution_id, args.compare_to) if run_id)
        found = [(executions.execution(scope, run_id), run_id) for run_id in wanted]
        if any(doc is None for doc, _ in found):
            return empty_result({"execution_id": args.execution_id, "compare_to": args.compare_to})
        docs = [doc for doc, _ in found if doc is not None]
        compared = len(docs) == 2
        runs = [executions.execution_runs(scope, str(d.get("execution_id")), values=compared) for d in docs]
        if len(docs) == 1:
            return _detail(ctx, docs[0], runs[0])
        return _compare(ctx, docs, runs)
    chip = resolve_chip(scope, args.chip_id)
    if args.since is not None or args.until is not None:
        return _in_window(ctx, scope, chip, args)
    runs_found = executions.recent_executions(scope, chip, args.status, args.tags, args.last_n)
    if not runs_found:
        return empty_result({"chip_id": chip, "status": args.status, "tags": args.tags})
    total, failed = executions.execution_counts(scope, chip, args.status, args.tags)
    shown = f"newest {len(runs_found)} of {total} (the chip's whole history; since/until count a window)"
    return {"chip_id": chip, "total": total, "failed": failed, "shown": shown, **_listing(ctx, runs_found)}


def _listing(ctx: ToolContext, runs_found: list[Doc], *bounds: datetime) -> dict[str, Any]:
    """Executions as rows, newest first; ``bounds`` are shown elsewhere in the output (same format)."""
    times = time_format(
        ctx, [*bounds, *(run.get(key) for run in runs_found for key in ("start_at", "end_at"))]
    )
    cols = ["execution_id", "name", "status", "tags", "start_at", "end_at", "elapsed_time", "message"]
    rows = [[run.get("execution_id"), run.get("name"), run.get("status"), run.get("tags") or [],
             *_span(run, times), run.get("message") or None] for run in runs_found]  # fmt: skip
    return {"units": {"elapsed_time": "s"}, **columnar(cols, rows)}


def _in_window(
    ctx: ToolContext, scope: ProjectScope, chip: str, args: ExecutionHistoryArgs
) -> dict[str, Any]:
    """Every execution that started in the window (with the status and tags asked for) counted:
    ``total``, ``failed``, ``status_counts``; the newest ``last_n`` listed."""
    since, until = window_bounds(ctx, args.since, args.until)
    started = executions_in_window(scope, chip, since, until, tags=args.tags)
    matching = [run for run in started if args.status is None or run.get("status") == args.status]
    window = window_echo(time_format(ctx, [since, until]), (since, until), since_given=args.since is not None)
    if not matching:
        return empty_result({"chip_id": chip, "status": args.status, "tags": args.tags, **window})
    counts = Counter(str(run.get("status")) for run in matching)
    shown = matching[: args.last_n]
    return {
        "chip_id": chip,
        "window": window,
        "total": len(matching),
        "failed": counts["failed"],
        "status_counts": dict(counts.most_common()),
        **({"shown": f"newest {len(shown)} of {len(matching)}"} if len(shown) < len(matching) else {}),
        **_listing(ctx, shown, since, until),
    }


def _span(run: Doc, times: TimeFormat) -> list[Any]:
    return [times(run.get("start_at")), times(run.get("end_at")), sig4(run.get("elapsed_time"))]


def _targets(runs: Runs) -> list[str] | dict[str, int]:
    qids = sorted({str(run.get("qid")) for run in runs if run.get("qid")}, key=qid_sort_key)
    if len(qids) <= LISTED_TARGETS:
        return qids
    couplings = sum("-" in qid for qid in qids)
    return {"qubits": len(qids) - couplings, "couplings": couplings}


def _figures(run: Doc) -> int:
    return len(run.get("figure_path") or []) + len(run.get("json_figure_path") or [])


def _tasks(runs: Runs) -> dict[str, Any]:
    """One row per task in run order: how many qids, runs per status, figures."""
    by_task: dict[str, list[Doc]] = {}
    for run in runs:
        by_task.setdefault(str(run.get("name")), []).append(run)
    statuses = [status for status in STATUSES if any(run.get("status") == status for run in runs)]
    rows = []
    for name, task_runs in by_task.items():
        counts = Counter(str(run.get("status")) for run in task_runs)
        qids = {str(run.get("qid")) for run in task_runs if run.get("qid")}
        rows.append(
            [name, len(qids), *(counts[status] for status in statuses), sum(map(_figures, task_runs))]
        )
    return {"cols": ["task_name", "qids", *statuses, "figures"], "rows": rows}


def _user_notes(runs: Runs) -> dict[str, Any]:
    rows = [
        [run.get("name"), run.get("qid"), str(note.get("content")).strip()]
        for run in runs
        if isinstance(note := run.get("user_note"), Mapping) and str(note.get("content") or "").strip()
    ]
    return {"user_notes": {"cols": ["task_name", "qid", "note"], "rows": rows}} if rows else {}


def _detail(ctx: ToolContext, run: Doc, runs: Runs) -> dict[str, Any]:
    times = time_format(ctx, [run.get("start_at"), run.get("end_at")])
    start_at, end_at, elapsed = _span(run, times)
    header = {
        "execution_id": run.get("execution_id"),
        "name": run.get("name"),
        "status": run.get("status"),
        "chip_id": run.get("chip_id"),
        "tags": run.get("tags") or [],
        "start_at": start_at,
        "end_at": end_at,
        "elapsed_time": elapsed,
        "message": run.get("message"),
        "note": run.get("note"),
        "runs": len(runs),
        "targets": _targets(runs),
        "figures": sum(map(_figures, runs)),
    }
    summary = failure_summary(Runs(reversed(runs)))  # newest first: its newest message per task
    header["status_counts"] = summary.pop("status_counts")
    return {
        "execution": {key: value for key, value in header.items() if value not in (None, "", [], {})},
        "units": {"elapsed_time": "s"},
        "tasks": _tasks(runs),
        **summary,
        **_user_notes(runs),
        **excluded_note(runs.excluded),
    }


def _values(runs: Runs) -> tuple[dict[tuple[str, str], float], dict[str, str]]:
    """(qid, parameter) → the value of the last completed run that output it, in its display unit;
    parameter → that unit."""
    values: dict[tuple[str, str], float] = {}
    units: dict[str, str] = {}
    for run in runs:
        if run.get("status") != "completed":
            continue
        for name, body in (run.get("output_parameters") or {}).items():
            value = output_value(run, name)
            if value is not None:
                scale, unit = shown_unit(name, (body or {}).get("unit"))
                values[(str(run.get("qid")), name)] = value * scale
                units.setdefault(name, unit)
    return values, units


def _failed(runs: Runs) -> set[tuple[str, str]]:
    return {(str(run.get("name")), str(run.get("qid"))) for run in runs if run.get("status") == "failed"}


def _failed_only(one: set[tuple[str, str]], other: set[tuple[str, str]]) -> dict[str, Any]:
    by_task: dict[str, list[str]] = {}
    for task, qid in sorted(one - other, key=lambda pair: (pair[0], qid_sort_key(pair[1]))):
        by_task.setdefault(task, []).append(qid)
    return {"cols": ["task_name", "qids"], "rows": [[task, qids] for task, qids in by_task.items()]}


def _compare(ctx: ToolContext, docs: list[Doc], runs: list[Runs]) -> dict[str, Any]:
    """Older → newer: the largest changes, per parameter the median change, failures in one only."""
    pairs = sorted(
        zip(docs, runs, strict=True),
        key=lambda pair: (as_utc(pair[0].get("start_at")) or EPOCH, str(pair[0].get("execution_id"))),
    )
    (old, old_runs), (new, new_runs) = pairs
    times = time_format(ctx, [doc.get(key) for doc in (old, new) for key in ("start_at", "end_at")])
    summary_rows = [
        [doc.get("execution_id"), doc.get("name"), doc.get("status"), *_span(doc, times), len(doc_runs),
         sum(run.get("status") == "failed" for run in doc_runs)]
        for doc, doc_runs in pairs
    ]  # fmt: skip
    before, units = _values(old_runs)
    after, new_units = _values(new_runs)
    changes: list[tuple[float, list[Any]]] = []
    per_parameter: dict[str, dict[str, float]] = {}
    for key in sorted(before.keys() & after.keys(), key=lambda k: (k[1], qid_sort_key(k[0]))):
        first, last = before[key], after[key]
        if first == 0:
            continue
        pct = (last - first) / abs(first) * 100
        per_parameter.setdefault(key[1], {})[key[0]] = pct
        changes.append((abs(pct), [key[0], key[1], sig4(first), sig4(last), pct1(pct)]))
    changes.sort(key=lambda item: -item[0])
    units = {**new_units, **units}
    parameter_rows = []
    for name, by_qid in sorted(per_parameter.items()):
        pcts = list(by_qid.values())
        largest = max(sorted(by_qid, key=qid_sort_key), key=lambda qid: abs(by_qid[qid]))
        median = pct1(statistics.median(pcts))
        parameter_rows.append(
            [name, units.get(name) or None, len(pcts), median, largest, pct1(by_qid[largest])]
        )
    old_failed, new_failed = _failed(old_runs), _failed(new_runs)
    old_id, new_id = str(old.get("execution_id")), str(new.get("execution_id"))
    result: dict[str, Any] = {
        "executions": {
            "cols": [
                "execution_id",
                "name",
                "status",
                "start_at",
                "end_at",
                "elapsed_time",
                "runs",
                "failed",
            ],
            "rows": summary_rows,
        },
        "units": {"elapsed_time": "s", **{name: units[name] for name in per_parameter if units.get(name)}},
        "changes": {
            "cols": ["qid", "parameter", old_id, new_id, "change_pct"],
            "rows": [row for _, row in changes[:RANKED]],
        },
        "parameters": {
            "cols": [
                "parameter",
                "unit",
                "compared",
                "median_change_pct",
                "largest_qid",
                "largest_change_pct",
            ],
            "rows": parameter_rows,
        },
        "failed_only_in": {
            old_id: _failed_only(old_failed, new_failed),
            new_id: _failed_only(new_failed, old_failed),
        },
    }
    excluded = old_runs.excluded + new_runs.excluded
    return {**result, **excluded_note(excluded)}
