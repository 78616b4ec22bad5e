"""Counts over a time window: ``search_task_results`` with ``since``/``until``/``group_by``.

Why one tool and not a new one: "which task failed most this week", "which qubit had the most
failed results since Monday" and "what happened since the 20th" are the same read (every run of a
window, filtered by task, qubit, status or execution) summarised three ways, and every schema token
is paid on every request. The window is read execution by execution
(``qdash.repositories.window``), so its cost follows the runs inside it, not the history kept.
Counts are of task results (runs); runs a person excluded are left out and counted.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from qdash.copilot.tools.catalog.common import empty_result, excluded_note, time_format
from qdash.copilot.tools.catalog.formatting import TimeFormat, qid_sort_key
from qdash.copilot.tools.catalog.reviews import review_matches, review_states, verdict_of
from qdash.copilot.tools.spec import ToolContext, ToolError
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.window import Window, moment, runs_in_window

GroupBy = Literal["qid", "task", "execution"]
DEFAULT_DAYS = 7
"""The window when only ``until`` or ``group_by`` is given."""
EXECUTIONS_SHOWN = 10
_RELATIVE = re.compile(r"(\d{1,4})\s*([dh])")
_GROUP_FIELD = {"qid": "qid", "task": "name", "execution": "execution_id"}
_GROUP_COL = {"qid": "qid", "task": "task_name", "execution": "execution_id"}


def parse_moment(text: str, timezone: str, now: datetime) -> datetime:
    """``7d``/``24h`` before ``now``, or an ISO date or time (without a zone: the deployment's)."""
    cleaned = text.strip()
    relative = _RELATIVE.fullmatch(cleaned.lower())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        return now - (timedelta(days=amount) if unit == "d" else timedelta(hours=amount))
    try:
        parsed = datetime.fromisoformat(cleaned)
    except ValueError:
        raise ToolError(
            f"'{text}' is not a time",
            "give an ISO date or time (2026-11-20, 2026-11-20T09:00, …Z) or a span back from now (7d, 24h)",
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=ZoneInfo(timezone))
    return parsed.astimezone(UTC)


def window_bounds(
    ctx: ToolContext, since: str | None, until: str | None, now: datetime | None = None
) -> tuple[datetime, datetime]:
    """``[since, until)`` in UTC; a missing end is now, a missing start :data:`DEFAULT_DAYS` before it."""
    current = now or datetime.now(UTC)
    zone = ctx.settings.copilot.timezone
    end = current if until is None else parse_moment(until, zone, current)
    start = end - timedelta(days=DEFAULT_DAYS) if since is None else parse_moment(since, zone, current)
    if start >= end:
        raise ToolError(f"Empty window: since {start.isoformat()} is not before until {end.isoformat()}")
    return start, end


def window_echo(times: TimeFormat, bounds: tuple[datetime, datetime], *, since_given: bool) -> dict[str, Any]:
    """The window as used, in the output's time format; ``default`` when the call gave no start
    (a 7-day window the call did not ask for is named, not silent)."""
    since, until = bounds
    window = {"since": times(since), "until": times(until)}
    if not since_given:
        window["default"] = f"{DEFAULT_DAYS}d back from until (no since given)"
    return window


def window_summary(
    ctx: ToolContext,
    scope: ProjectScope,
    chip: str,
    *,
    filters: dict[str, Any],
    bounds: tuple[datetime, datetime],
    group_by: GroupBy | None,
    shown: int,
    since_given: bool,
) -> tuple[dict[str, Any], list[Doc]]:
    """The window's counts, and its newest ``shown`` runs (their rows are the caller's, as without a
    window); ``group_by`` ranks qubits, tasks or executions by their number of runs instead."""
    since, until = bounds
    found = runs_in_window(
        scope,
        chip,
        since,
        until,
        task_name=filters["task_name"],
        qids=filters["qids"],
        status=filters["status"],
        execution_id=filters["execution_id"],
        review_states=None if filters.get("review") is None else review_states(filters["review"]),
    )
    review = filters.get("review")
    if review is not None:
        found.runs[:] = [run for run in found.runs if review_matches(run, review)]
    times = time_format(ctx, [since, until, *(e.get("start_at") for e in found.executions)])
    window = window_echo(times, bounds, since_given=since_given)
    if not found.runs and not found.executions:
        shown_filters = {key: value for key, value in filters.items() if key != "qids"}
        named = {"chip_id": chip, **shown_filters, "since": window["since"], "until": window["until"]}
        return empty_result(named, excluded=found.runs.excluded), []
    result: dict[str, Any] = {
        "chip_id": chip,
        "window": window,
        "unit": "task results",
        "total": len(found.runs),
        "status_counts": dict(Counter(str(run.get("status")) for run in found.runs).most_common()),
    }
    verdicts = Counter(verdict for run in found.runs if (verdict := verdict_of(run)) is not None)
    if verdicts:
        result["review_counts"] = dict(verdicts.most_common())
    if group_by is None:
        if review is None:  # which executions started is a window's story, not a review count's
            result["executions"] = _executions(found, times)
        result.update(failures_by_task(found.runs))
        newest = found.runs[:shown]
    else:
        result["groups"] = _groups(found, group_by, shown, by_review=review is not None)
        newest = []
    return {**result, **excluded_note(found.runs.excluded)}, newest


def failures_by_task(runs: list[Doc]) -> dict[str, Any]:
    """One row per failing task (most failures first): how often, on which qids, its newest message
    (``runs`` are newest first); nothing when no run failed."""
    by_task: dict[str, list[Doc]] = {}
    for run in runs:
        if run.get("status") == "failed":
            by_task.setdefault(str(run.get("name")), []).append(run)
    if not by_task:
        return {}
    rows = [
        [name, len(failed), sorted({str(r.get("qid")) for r in failed}, key=qid_sort_key),
         failed[0].get("message") or None]
        for name, failed in sorted(by_task.items(), key=lambda item: -len(item[1]))
    ]  # fmt: skip
    return {"failures": {"cols": ["task_name", "count", "qids", "newest_message"], "rows": rows}}


def _executions(found: Window, times: Any) -> dict[str, Any]:
    """The executions that started in the window (newest first): status and their runs counted."""
    runs = Counter(str(run.get("execution_id")) for run in found.runs)
    failed = Counter(str(run.get("execution_id")) for run in found.runs if run.get("status") == "failed")
    rows = [
        [str(e.get("execution_id")), e.get("status"), times(e.get("start_at")),
         runs[str(e.get("execution_id"))], failed[str(e.get("execution_id"))]]
        for e in found.executions[:EXECUTIONS_SHOWN]
    ]  # fmt: skip
    cols = ["execution_id", "status", "start_at", "results", "failed"]
    return {"count": len(found.executions), "cols": cols, "rows": rows}


def _groups(found: Window, group_by: GroupBy, shown: int, *, by_review: bool) -> dict[str, Any]:
    """Qubits, tasks or executions ranked by their runs in the window (ties by id), with the count
    per status (per review verdict with ``by_review``); the first ``shown`` of them."""
    field = _GROUP_FIELD[group_by]

    def kind(run: Doc) -> str:
        return str(verdict_of(run) if by_review else run.get("status"))

    per_key: dict[str, Counter[str]] = {}
    for run in found.runs:
        per_key.setdefault(str(run.get(field)), Counter())[kind(run)] += 1
    statuses = [status for status, _ in Counter(kind(r) for r in found.runs).most_common()]
    ranked = sorted(per_key, key=lambda key: (-sum(per_key[key].values()), qid_sort_key(key), key))
    rows = [[key, sum(per_key[key].values()), *(per_key[key][s] for s in statuses)] for key in ranked[:shown]]
    cut = f"{len(rows)} of {len(ranked)} {group_by}s, ranked by results (most first)"
    cols = [_GROUP_COL[group_by], "results", *statuses]
    return {"cols": cols, "rows": rows, "total_groups": len(ranked), "shown": cut}


def newest_first(runs: list[Doc]) -> list[Doc]:
    """``runs`` newest first by their start (the full documents come back unordered)."""
    return sorted(runs, key=lambda run: moment(run.get("start_at")), reverse=True)
