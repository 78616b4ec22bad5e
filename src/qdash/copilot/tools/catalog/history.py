"""Run history of one qubit or coupling: ``get_latest_task_result``, ``get_task_history``,
``get_parameter_timeseries``, ``search_task_results``, ``list_available_parameters``.

Each issues one indexed, limited query on the history collections (see repositories.task_results);
results are columnar with units hoisted, so 50 runs cost a few hundred tokens.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

from pydantic import Field

from qdash.copilot.run_figures import figure_block, figure_files, figure_reference
from qdash.copilot.tools.catalog.args import (
    ChipId,
    OptTarget,
    OptText,
    ParameterName,
    ShortText,
    Target,
    ToolArgs,
    optional_choice,
)
from qdash.copilot.tools.catalog.common import (
    PARAMETERS_HINT,
    empty_result,
    excluded_note,
    resolve_chip,
    scope_of,
    time_format,
)
from qdash.copilot.tools.catalog.cooldowns import segments
from qdash.copilot.tools.catalog.counts import (
    GroupBy,
    failures_by_task,
    newest_first,
    window_bounds,
    window_summary,
)
from qdash.copilot.tools.catalog.formatting import (
    columnar,
    compact_parameters,
    scaled,
    sig4,
)
from qdash.copilot.tools.catalog.identifiers import both_orders, canonical_task_name, closest_task_names
from qdash.copilot.tools.catalog.reviews import ReviewFilter, review_cells, review_detail
from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, ToolError, tool
from qdash.models.task import TaskStatus
from qdash.repositories import task_results
from qdash.repositories.current_state import saved_parameter_names
from qdash.repositories.task_results import cooldown_of
from qdash.units import shown_unit


def task_name_of(raw: str) -> str:
    """The canonical task name, or an error naming the closest known ones."""
    name = canonical_task_name(raw)
    if name is None:
        closest = ", ".join(closest_task_names(raw)) or "none"
        raise ToolError(f"Unknown task_name '{raw}' (closest: {closest})", "use a task name from the list")
    return name


class LatestTaskArgs(ToolArgs):
    task_name: ShortText
    chip_id: ChipId = None
    qid: Target


@tool(label="Fetching latest task result")
def get_latest_task_result(ctx: ToolContext, args: LatestTaskArgs) -> dict[str, Any] | ToolResult:
    """Newest completed run of a task on a qid → {task_id,execution_id,start_at,output_parameters,
    figures,ai_review}

    The newest completed run of a task on a qid, with what its AI review said (``catalog/reviews.py``).
    """
    name = task_name_of(args.task_name)
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    runs = task_results.completed_runs(scope, chip, name, both_orders(args.qid), 1)
    if not runs:
        return empty_result({"task_name": name, "qid": args.qid, "chip_id": chip}, excluded=runs.excluded)
    run = runs[0]
    times = time_format(ctx, [run.get("start_at")])
    qid = str(run.get("qid", args.qid))
    figure = figure_reference(run, task_name=name, qid=qid, chip_id=chip, start_at=times(run.get("start_at")))
    data = {
        "task_name": name,
        "qid": qid,
        "task_id": run.get("task_id"),
        "execution_id": run.get("execution_id"),
        "start_at": times(run.get("start_at")),
        "output_parameters": compact_parameters(
            run.get("output_parameters"), times, with_source=False, scoring=ctx.settings.scoring
        ),
        **({"figures": files} if (files := figure_files(run)) else {}),
        **review_detail(run),
        **excluded_note(runs.excluded),
    }
    return ToolResult(data, attachments=[figure_block(figure)]) if figure else data


class TaskHistoryArgs(LatestTaskArgs):
    last_n: int = Field(5, ge=1, le=50)
    cooldown_id: OptText = None  # the name says it; every schema byte is paid per request


@tool(label="Fetching task history")
def get_task_history(ctx: ToolContext, args: TaskHistoryArgs) -> dict[str, Any]:
    """Completed runs of a task on a qid, newest first, outputs with errors

    Recent completed runs of one task, one row per run with every output and its error.
    """
    name = task_name_of(args.task_name)
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    qids = both_orders(args.qid)
    runs = task_results.completed_runs(scope, chip, name, qids, args.last_n, cooldown_id=args.cooldown_id)
    if not runs:
        filters = {"task_name": name, "qid": args.qid, "chip_id": chip, "cooldown_id": args.cooldown_id}
        return empty_result(filters, excluded=runs.excluded)
    display: dict[str, tuple[float, str]] = {}
    for run in runs:
        for param, body in sorted((run.get("output_parameters") or {}).items()):
            display.setdefault(param, shown_unit(param, body.get("unit")))
    units = {param: unit for param, (_, unit) in display.items()}
    times = time_format(ctx, [run.get("start_at") for run in runs])
    cols = ["start_at", "execution_id", "cooldown_id"]
    for param in units:
        cols += [param, f"{param}.error"]
    rows = []
    for run in runs:
        outputs = run.get("output_parameters") or {}
        row: list[Any] = [times(run.get("start_at")), run.get("execution_id"), cooldown_of(run) or None]
        for param, (scale, _) in display.items():
            body = outputs.get(param) or {}
            row += [scaled(body.get("value"), scale), scaled(body.get("error"), scale) or None]
        rows.append(row)
    table = columnar(cols, rows, keep=units)
    return {"task_name": name, "qid": args.qid, "units": units, **table, **excluded_note(runs.excluded)}


class ParameterTimeseriesArgs(ToolArgs):
    parameter_name: ParameterName
    chip_id: ChipId = None
    qid: Target
    last_n: int = Field(10, ge=1, le=100)
    cooldown_id: OptText = None  # the name says it; every schema byte is paid per request


@tool(label="Fetching parameter timeseries", rate_limited=True)
def get_parameter_timeseries(ctx: ToolContext, args: ParameterTimeseriesArgs) -> dict[str, Any]:
    """One parameter of ONE qid over time; the cooldowns it spans break the trend

    Chronological values of one parameter on one qid (newest ``last_n`` completed runs).
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    param = args.parameter_name
    qids = both_orders(args.qid)
    runs = task_results.parameter_runs(scope, chip, param, qids, args.last_n, cooldown_id=args.cooldown_id)
    if not runs:
        filters = {"parameter_name": param, "qid": args.qid, "chip_id": chip, "cooldown_id": args.cooldown_id}
        return empty_result(filters, excluded=runs.excluded, hint=PARAMETERS_HINT)
    runs.reverse()
    times = time_format(ctx, [run.get("start_at") for run in runs])
    unit = ""
    rows = []
    for run in runs:
        body = (run.get("output_parameters") or {}).get(param) or {}
        scale, shown = shown_unit(param, body.get("unit"))
        unit = unit or shown
        rows.append(
            [
                times(run.get("start_at")),
                scaled(body.get("value"), scale),
                scaled(body.get("error"), scale) or None,
                run.get("execution_id"),
                run.get("name"),
                cooldown_of(run) or None,
            ]
        )
    cols = ["t", "value", "error", "execution_id", "task_name", "cooldown_id"]
    table = columnar(cols, rows, keep=cols[:-1])
    split = {"cooldowns": cycles} if (cycles := segments(runs, times)) else {}
    return {
        "parameter_name": param,
        "qid": args.qid,
        "unit": unit,
        **table,
        **split,
        **excluded_note(runs.excluded),
    }


class SearchArgs(ToolArgs):
    chip_id: ChipId = None
    task_name: OptText = None
    qid: OptTarget = None
    status: Annotated[TaskStatus | None, optional_choice(TaskStatus)] = None
    execution_id: OptText = None
    last_n: int = Field(10, ge=1, le=50)
    since: OptText = Field(None, description="ISO time or 7d")
    until: OptText = None
    group_by: Annotated[GroupBy | None, optional_choice(GroupBy)] = Field(
        None, description="rank by results in the window (7d without since)"
    )
    review: Annotated[ReviewFilter | None, optional_choice(ReviewFilter)] = None


@tool(label="Searching task results")
def search_task_results(ctx: ToolContext, args: SearchArgs) -> dict[str, Any]:
    """Task runs of any status, newest first → {status_counts,failures}; since/until counts all runs
    of a window → {window,total,executions}; group_by ranks → {groups}; review keeps AI-reviewed runs
    (flagged: REVIEW/FAIL) → {review_counts}

    Newest task runs of any status matching the filters (failed fits, one execution, …), each with
    its AI review's verdict and reason. With a window (``since``, ``until``, ``group_by`` or
    ``review``; ``DEFAULT_DAYS`` back when no start is given) every run inside it is counted
    (``catalog/counts.py``); ``review`` counts only runs whose review matches, grouped by verdict.
    """
    name = None if args.task_name is None else task_name_of(args.task_name)
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    qids = None if args.qid is None else both_orders(args.qid)
    filters = {"task_name": name, "qid": args.qid, "status": args.status, "execution_id": args.execution_id}
    if any(value is not None for value in (args.since, args.until, args.group_by, args.review)):
        bounds = window_bounds(ctx, args.since, args.until)
        counted, shown = window_summary(
            ctx,
            scope,
            chip,
            filters={**filters, "qids": qids, "review": args.review},
            bounds=bounds,
            group_by=args.group_by,
            shown=args.last_n,
            since_given=args.since is not None,
        )
        if not shown:
            return counted
        full = task_results.searched_runs(scope, [str(run.get("task_id")) for run in shown])
        return {**counted, **_run_rows(ctx, newest_first(full))}
    runs = task_results.search(
        scope,
        chip,
        task_name=name,
        qids=qids,
        status=args.status,
        execution_id=args.execution_id,
        limit=args.last_n,
    )
    if not runs:
        return empty_result({"chip_id": chip, **filters}, excluded=runs.excluded)
    result = {"chip_id": chip, **_run_rows(ctx, runs), **failure_summary(runs)}
    if args.execution_id is not None and len(runs) == args.last_n:  # cut: count all of the execution
        matches = task_results.execution_matches(
            scope, chip, task_name=name, qids=qids, status=args.status, execution_id=args.execution_id
        )
        result.update(
            total=len(matches), **failure_summary(matches), shown=f"newest {len(runs)} of {len(matches)}"
        )
    elif len(runs) == args.last_n:
        result["shown"] = f"newest {len(runs)}; status_counts of these; since/until counts all"
    return {**result, **excluded_note(runs.excluded)}


def _run_rows(ctx: ToolContext, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs as one table (newest first as given), elapsed time in seconds."""
    moments = [run.get(key) for run in runs for key in ("start_at", "end_at")]
    times = time_format(ctx, moments)
    cols = [
        "task_id", "task_name", "qid", "status", "execution_id", "start_at", "end_at",
        "elapsed_time", "output_parameters", "message", "figures", "review", "review_reason",
    ]  # fmt: skip
    rows = [
        [
            run.get("task_id"),
            run.get("name"),
            run.get("qid"),
            run.get("status"),
            run.get("execution_id"),
            times(run.get("start_at")),
            times(run.get("end_at")),
            sig4(run.get("elapsed_time")),
            compact_parameters(run.get("output_parameters"), times, with_source=False),
            run.get("message") or None,
            figure_files(run),
            *review_cells(run),
        ]
        for run in runs
    ]
    return {"units": {"elapsed_time": "s"}, **columnar(cols, rows)}


def failure_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per status and, when some runs failed, one row per failing task (``runs`` newest first)."""
    counts = Counter(str(run.get("status")) for run in runs)
    return {"status_counts": dict(counts.most_common()), **failures_by_task(runs)}


class AvailableParametersArgs(ToolArgs):
    chip_id: ChipId = None
    qid: OptTarget = None


@tool(label="Listing available parameters")
def list_available_parameters(ctx: ToolContext, args: AvailableParametersArgs) -> dict[str, Any]:
    """The parameter_names stored for the chip or one qid

    Names of the parameters saved for the chip (or one qubit/coupling): what the time-series and
    lineage tools can be asked about.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    qids = None if args.qid is None else both_orders(args.qid)
    names = sorted(saved_parameter_names(scope, chip, qids))
    return {"chip_id": chip, "qid": args.qid, "parameter_names": names, "count": len(names)}
