"""The demo model's plans: which tool to call next, and the answer composed from what they returned.

Why plans are pure functions of the question and the outputs seen so far: the model keeps no state
(the loop resends the turn's items each round), so a replayed or resumed turn takes the same path,
and every number in an answer is read from a tool output of this turn — nothing is canned.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from qdash.copilot.demo_model.analysis_code import LOSS_THRESHOLD, WINDOW_DAYS, loss_analysis_code
from qdash.copilot.demo_model.questions import ANALYSIS_PREFIX, METRIC_TASKS, Question
from qdash.copilot.tools.catalog.metrics import QUBIT_METRICS
from qdash.models.answer import Assessment

ANALYSIS_TOOL = "execute_python_analysis"
OUTPUT_PARAMETERS = "Output parameters: "
TABLE_ROWS = 10
QUBIT_OVERVIEW = (
    "t1",
    "t2_echo",
    "t2_star",
    "qubit_frequency",
    "average_readout_fidelity",
    "x90_gate_fidelity",
)


@dataclass(frozen=True)
class Seen:
    """One tool call of this turn and its parsed output."""

    name: str
    arguments: dict[str, Any]
    output: dict[str, Any]


@dataclass(frozen=True)
class Calls:
    """Call these tools next: ``(name, arguments)`` pairs."""

    calls: list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Answer:
    """The final answer: markdown text blocks and an assessment."""

    texts: list[str]
    assessment: Assessment | None = None


Step = Calls | Answer


def _num(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, int | float) and not isinstance(value, bool) else str(value)


def _title(metric: str) -> str:
    known = QUBIT_METRICS.get(metric)
    return known.title if known else metric


def _error(output: dict[str, Any]) -> str | None:
    error = output.get("error")
    return str(error) if error else None


def _table(output: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of a ``{cols, rows}`` tool result as dicts (compacted results have no row list)."""
    cols, rows = output.get("cols"), output.get("rows")
    if not isinstance(cols, list) or not isinstance(rows, list):
        return []
    return [dict(zip(cols, row, strict=False)) for row in rows if isinstance(row, list)]


def _failed_tool(seen: Seen) -> Answer:
    return Answer([f"`{seen.name}` answered with an error, so I cannot answer this: {_error(seen.output)}"])


def plan_heatmap(question: Question, seen: Sequence[Seen]) -> Step:
    metric = question.metric or "t1"
    if not seen:
        return Calls([("generate_chip_heatmap", {"metric_name": metric})])
    if _error(seen[0].output):
        return _failed_tool(seen[0])
    stats = seen[0].output.get("statistics") or {}
    unit = stats.get("unit", "")
    replaced = [f"Q{qid}" for qid in stats.get("last_good_for") or []]
    text = (
        f"**{_title(metric)} heatmap**: {stats.get('count')} of {stats.get('total_qubits')} qubits have a "
        f"value ({stats.get('coverage')} coverage). Median {_num(stats.get('median'))} {unit}, mean "
        f"{_num(stats.get('mean'))} {unit}, lowest {_extreme(stats.get('min'), unit)}, highest "
        f"{_extreme(stats.get('max'), unit)}."
    )
    if replaced:
        text += (
            f" For {', '.join(replaced)} the last value that passed is used (their stored one is not valid)."
        )
    return Answer([text])


def _extreme(value: Any, unit: str) -> str:
    """A statistic's extreme as the tools give it, ``[qid, value]``: ``8.716 μs (Q14)``."""
    if isinstance(value, list) and len(value) == 2:
        return f"{_num(value[1])} {unit} (Q{value[0]})"
    return f"{_num(value)} {unit}"


def plan_lost(question: Question, seen: Sequence[Seen]) -> Step:
    metric = question.metric or "t1"
    if not seen:
        return Calls([("get_chip_parameter_timeseries", {"parameter_name": metric, "last_n": 20})])
    series = seen[0].output
    if _error(series):
        return _failed_tool(seen[0])
    if len(seen) == 1:
        code = loss_analysis_code(str(series.get("data_key", metric)), _title(metric))
        return Calls([(ANALYSIS_TOOL, {"code": code})])
    analysis = seen[1].output
    try:
        summary = json.loads(str(analysis.get("output")))
    except json.JSONDecodeError:
        summary = None
    if _error(analysis) or not isinstance(summary, dict):
        counts = series.get("trend_counts") or {}
        return Answer(
            [
                f"The analysis did not run ({_error(analysis) or 'no result'}). From the chip time series "
                f"alone: {counts.get('down', 0)} of {series.get('num_qubits')} qubits trend down in "
                f"{_title(metric)}."
            ],
            "warning",
        )
    return Answer(*_lost_text(metric, series.get("unit", ""), summary))


def _lost_text(metric: str, unit: str, summary: dict[str, Any]) -> tuple[list[str], Assessment | None]:
    lost: list[dict[str, Any]] = summary.get("lost") or []
    compared = int(summary.get("compared") or 0)
    window = (
        f"the {WINDOW_DAYS} days up to the latest measurement ({summary.get('start')} → {summary.get('end')})"
    )
    rule = (
        f"a loss is a drop of at least {LOSS_THRESHOLD:.0%} from the first to the last value in that window"
    )
    if compared == 0:
        return [f"I cannot tell: no qubit has two {_title(metric)} measurements in {window}."], None
    if not lost:
        return [
            f"**No qubit lost {_title(metric)}** over {window}; {compared} qubits compared ({rule})."
        ], "good"
    lines = [
        f"**{len(lost)} of {compared} qubits lost {_title(metric)}** over {window}; {rule}.",
        "",
        f"| qubit | first ({unit}) | last ({unit}) | change |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| Q{row['qid']} | {_num(row['first'])} | {_num(row['last'])} | {row['change_pct']:+.1f} % |"
        for row in lost[:TABLE_ROWS]
    ]
    if len(lost) > TABLE_ROWS:
        lines.append(f"\n{len(lost) - TABLE_ROWS} more in the chart.")
    return ["\n".join(lines)], "bad" if len(lost) * 4 >= compared else "warning"


FAILED_ROWS = 50
"""Failed runs a failure plan asks for (the search tool's most)."""
QIDS_SHOWN = 8


def _failure_filters(question: Question) -> dict[str, Any]:
    """The qubit and task a failure question names (``T1 fits`` → ``CheckT1``), as search arguments."""
    named = (("task_name", question.task), ("qid", question.qid))
    return {key: value for key, value in named if value is not None}


def _failure_subject(question: Question) -> str:
    """What failed, as the answer names it: ``task results``, ``CheckT1 results on Q16``."""
    what = f"{question.task} results" if question.task else "task results"
    return f"{what} on Q{question.qid}" if question.qid else what


def _failed_count(search: Seen, listed: int) -> str:
    """How many failed: the tool's ``total`` when it counted every match (an execution cut at
    ``last_n``), else its count of the runs it found, which ``last_n`` may have cut (a size guard may
    list fewer still)."""
    if isinstance(total := search.output.get("total"), int):
        return str(total)
    counts = search.output.get("status_counts") or {}
    found = int(counts.get("failed") or listed)
    return f"at least {found}" if found >= FAILED_ROWS else str(found)


def plan_failed_tasks(question: Question, seen: Sequence[Seen]) -> Step:
    """Failed runs where the question looks: a span back from now (``failed this week``), a named
    execution, the latest execution, else the newest failures of any time (one run, if it names
    one); filtered by the qubit and task it names."""
    filters = {**_failure_filters(question), "status": "failed", "last_n": FAILED_ROWS}
    if question.window is not None:
        if not seen:
            return Calls([("search_task_results", {"since": question.window, **filters})])
        return _failed_in_window(question, seen[0])
    if question.execution_id is not None:
        if not seen:
            return Calls([("search_task_results", {"execution_id": question.execution_id, **filters})])
        return _failed_in_execution(question, seen[0], f"execution **{question.execution_id}**")
    if not question.latest:
        if not seen:
            return Calls([("search_task_results", filters)])
        return _failed_newest(question, seen[0])
    if not seen:
        return Calls([("get_execution_history", {"last_n": 1})])
    executions = _table(seen[0].output)
    if not executions:
        return Answer(
            [f"I found no execution to look at: {_error(seen[0].output) or 'the history is empty'}."]
        )
    latest = executions[0]
    eid = str(latest.get("execution_id"))
    if len(seen) == 1:
        return Calls([("search_task_results", {"execution_id": eid, **filters})])
    about = (
        f"the latest execution **{eid}** ({latest.get('name')}, {latest.get('status')}, "
        f"{latest.get('start_at')} → {latest.get('end_at')})"
    )
    return _failed_in_execution(question, seen[1], about)


def _failure_rows(failed: list[dict[str, Any]], when: bool) -> list[str]:
    """Failed runs as a table: task, qubit, message; and when they ran, if from many executions."""
    cols = ["run at"] * when + ["task", "qubit", "why"]
    lines = ["", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in failed:
        cells = [row.get("start_at")] * when + [
            row.get("task_name"),
            f"Q{row.get('qid')}",
            row.get("message"),
        ]
        lines.append("| " + " | ".join(str(cell or "—") for cell in cells) + " |")
    return lines


def _failed_in_execution(question: Question, search: Seen, about: str) -> Answer:
    if _error(search.output):
        return _failed_tool(search)
    failed = _table(search.output)
    subject = _failure_subject(question)
    if not failed:
        return Answer([f"No {subject} failed in {about}."], "good")
    count = _failed_count(search, len(failed))
    lines = [f"**{count} {subject} failed** in {about}:", *_failure_rows(failed, when=False)]
    if str(len(failed)) != count:
        lines.append(f"\nListed: the newest {len(failed)} of them.")
    return Answer(["\n".join(lines)], "warning")


def _failed_newest(question: Question, search: Seen) -> Answer:
    """The newest failed runs of any time; or the one run the question names, if it is among them."""
    if _error(search.output):
        return _failed_tool(search)
    failed = _table(search.output)
    subject = _failure_subject(question)
    if question.task_id is not None:
        run = next((row for row in failed if row.get("task_id") == question.task_id), None)
        if run is None:
            among = f"the newest {len(failed)}" if failed else "the 0"
            chip = search.output.get("chip_id") or (search.output.get("filters") or {}).get("chip_id")
            return Answer([f"Run `{question.task_id}` is not among {among} failed {subject} of chip {chip}."])
        why = run.get("message") or "no message recorded"
        where = f"{run.get('task_name')} on Q{run.get('qid')}, {run.get('start_at')}"
        return Answer([f"Run `{question.task_id}` ({where}) failed: {why}."], "warning")
    if not failed:
        return Answer([f"No {subject} failed: no failed run is stored."], "good")
    count = _failed_count(search, len(failed))
    lines = [f"**{count} {subject} failed** (any time; the newest first):", *_failure_rows(failed, when=True)]
    return Answer(["\n".join(lines)], "warning")


def plan_failed_executions(question: Question, seen: Sequence[Seen]) -> Step:
    """The chip's failed executions (aborted workflows), with the message each ended with."""
    if not seen:
        return Calls([("get_execution_history", {"status": "failed", "last_n": FAILED_ROWS})])
    if _error(seen[0].output):
        return _failed_tool(seen[0])
    failed = _table(seen[0].output)
    chip = seen[0].output.get("chip_id") or seen[0].output.get("filters", {}).get("chip_id")
    if not failed:
        return Answer([f"No execution on chip {chip} failed."], "good")
    many = "at least " if len(failed) >= FAILED_ROWS else ""
    lines = [
        f"**{many}{len(failed)} execution(s) failed** on chip {chip}:",
        "",
        "| execution | workflow | started | why |",
        "|---|---|---|---|",
    ]
    for row in failed:
        cells = [row.get("execution_id"), row.get("name"), row.get("start_at"), row.get("message") or "—"]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return Answer(["\n".join(lines)], "warning")


def _failed_in_window(question: Question, search: Seen) -> Answer:
    """The window's failed runs counted by task (the tool counts every run of the window)."""
    output = search.output
    if _error(output):
        return _failed_tool(search)
    subject = _failure_subject(question)
    window = output.get("window") or output.get("filters") or {}
    span = f"between {window.get('since')} and {window.get('until')}"
    zone = f" ({output['timezone']})" if output.get("timezone") else ""
    total = int(output.get("total") or 0)
    ran = int((output.get("executions") or {}).get("count") or 0)
    if total == 0:
        if not ran:
            return Answer([f"No {subject} failed {span}{zone}: no execution started in that span."])
        return Answer([f"No {subject} failed {span}{zone}, over {ran} execution(s)."], "good")
    lines = [
        f"**{total} {subject} failed** on chip {output.get('chip_id')} {span}{zone}, "
        f"over {ran} execution(s):",
        "",
        "| task | failed | qubits | newest message |",
        "|---|---|---|---|",
    ]
    for row in _table(output.get("failures") or {}):
        qids = [str(q) for q in row.get("qids") or []]
        shown = ", ".join(f"Q{q}" for q in qids[:QIDS_SHOWN]) + (
            f" and {len(qids) - QIDS_SHOWN} more" if len(qids) > QIDS_SHOWN else ""
        )
        lines.append(
            f"| {row.get('task_name')} | {row.get('count')} | {shown} | {row.get('newest_message') or '—'} |"
        )
    return Answer(["\n".join(lines)], "warning")


def plan_qubit(question: Question, seen: Sequence[Seen]) -> Step:
    if not seen:
        return Calls([("get_qubit_params", {"qid": question.qid})])
    if _error(seen[0].output):
        return _failed_tool(seen[0])
    params: dict[str, Any] = seen[0].output.get("params") or {}
    wanted = [question.metric] if question.metric in params else [p for p in QUBIT_OVERVIEW if p in params]
    lines = [
        f"**Q{seen[0].output.get('qid')}** on chip {seen[0].output.get('chip_id')}:",
        "",
        "| parameter | value | calibrated |",
        "|---|---|---|",
    ]
    for name in wanted:
        entry = params[name]
        lines.append(
            f"| {name} | {_num(entry.get('value'))} {entry.get('unit', '')} | {entry.get('calibrated_at')} |"
        )
    lines += [_not_valid(name, params[name]) for name in wanted if params[name].get("invalid")]
    return Answer(["\n".join(lines)])


def _not_valid(name: str, entry: dict[str, Any]) -> str:
    """A stored value a failed or excluded run wrote (the tool's ``invalid``), and the last that passed."""
    good = entry.get("last_good")
    instead = (
        f"the last value that passed is {_num(good.get('value'))} {entry.get('unit', '')} "
        f"({good.get('calibrated_at')})"
        if isinstance(good, dict)
        else "no run of it passed"
    )
    return f"\n**{name} above is not valid** ({entry['invalid']}): {instead}."


SERIES_POINTS = 10
"""Runs per parameter the series plan fetches (the tool's own default)."""


def _values(rows: list[dict[str, Any]]) -> list[float]:
    return [row["value"] for row in rows if isinstance(row.get("value"), int | float)]


def _change(values: list[float]) -> str:
    first, last = values[0], values[-1]
    return f"{100 * (last - first) / abs(first):+.1f} %" if len(values) > 1 and first else "—"


def plan_series(question: Question, seen: Sequence[Seen]) -> Step:
    """One qubit's history of the parameters the question names (a trend, a history, two
    parameters compared): one ``get_parameter_timeseries`` per parameter, in one round."""
    if not question.metrics:
        return Answer([f"{_no_parameter(question.qid)}\n\n{CAN_ANSWER}"])
    if not seen:
        return Calls(
            [
                (
                    "get_parameter_timeseries",
                    {"parameter_name": m, "qid": question.qid, "last_n": SERIES_POINTS},
                )
                for m in question.metrics
            ]
        )
    found = [(call, _table(call.output)) for call in seen if _table(call.output)]
    missing = [call for call in seen if not _table(call.output)]
    titles = [_title(m) for m in question.metrics]
    names = " and ".join([", ".join(titles[:-1]), titles[-1]] if len(titles) > 1 else titles)
    if not found:
        return Answer([f"Q{question.qid} has no stored {names} values ({_why_empty(seen[0].output)})."])
    lines = [f"**{names} of Q{question.qid}**, the last {SERIES_POINTS} runs of each at most:", ""]
    if len(found) == 1:
        call, rows = found[0]
        unit = call.output.get("unit", "")
        lines += [f"| run at | {_title(call.arguments['parameter_name'])} ({unit}) |", "|---|---|"]
        lines += [f"| {row.get('t')} | {_num(row.get('value'))} |" for row in rows]
        values = _values(rows)
        if values:
            lines.append(f"\nFirst to last: {_change(values)} over {len(values)} runs.")
    else:
        lines += [
            "| parameter | runs | first | last | change | min | max | unit |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for call, rows in found:
            values = _values(rows) or [float("nan")]
            lines.append(
                f"| {_title(call.arguments['parameter_name'])} | {len(rows)} | {_num(values[0])} | "
                f"{_num(values[-1])} | {_change(values)} | {_num(min(values))} | {_num(max(values))} | "
                f"{call.output.get('unit', '')} |"
            )
    for call in missing:
        lines.append(f"\nNo {_title(call.arguments['parameter_name'])} values ({_why_empty(call.output)}).")
    lines += [f"\n{reading}" for reading in question.readings]
    return Answer(["\n".join(lines)])


def _why_empty(output: dict[str, Any]) -> str:
    """Why a series tool returned no rows: its error, else no run matched (some excluded upstream)."""
    if error := _error(output):
        return error
    excluded = output.get("excluded")
    return f"no run recorded one; {excluded} excluded from metrics" if excluded else "no run recorded one"


def _no_parameter(qid: str | None) -> str:
    return (
        f"I can show the history of a parameter of Q{qid}, but your question names none I know. "
        f"Parameters: {', '.join(f'`{name}`' for name in QUBIT_METRICS)}."
    )


def plan_compare_qubits(question: Question, seen: Sequence[Seen]) -> Step:
    """Two or more qubits side by side: one ``compare_qubits`` call, the named parameters (else an
    overview), one column per qubit."""
    wanted = list(question.metrics) or list(QUBIT_OVERVIEW)
    if not seen:
        return Calls([("compare_qubits", {"qids": list(question.qids), "param_names": wanted})])
    if _error(seen[0].output):
        return _failed_tool(seen[0])
    output = seen[0].output
    rows = {str(row["qid"]): row for row in _table(output)}
    qids = [q for q in question.qids if q in rows]
    units: dict[str, str] = output.get("units") or {}
    lines = [
        f"**{' vs '.join(f'Q{q}' for q in qids)}** on chip {output.get('chip_id')}, current values:",
        "",
        "| parameter | " + " | ".join(f"Q{q}" for q in qids) + " | unit |",
        "|---|" + "---|" * len(qids) + "---|",
    ]
    for name in wanted:
        cells = [_num(rows[q].get(name)) if rows[q].get(name) is not None else "—" for q in qids]
        lines.append(f"| {_title(name)} | " + " | ".join(cells) + f" | {units.get(name, '')} |")
    if output.get("not_found"):
        lines.append(f"\nNot on this chip: {', '.join(f'Q{q}' for q in output['not_found'])}.")
    for row in _table(output.get("flagged") or {}):  # the tool shows their last good values
        passed = row.get("last_good") is not None
        kept = f"the last value that passed ({row.get('last_good_at')})" if passed else "—"
        name = _title(str(row.get("parameter")))
        lines.append(
            f"\nQ{row.get('qid')} {name}: the stored {_num(row.get('value'))} is not valid "
            f"({row.get('why')}); shown: {kept}."
        )
    lines += [f"\n{reading}" for reading in question.readings]
    return Answer(["\n".join(lines)])


FIGURE_QUBITS = ("16", "0", "5")
"""Qubits the figure plan offers when the question names none (present on every demo chip)."""


def plan_figure(question: Question, seen: Sequence[Seen]) -> Step:
    """The newest run's figure of a metric on a qubit (the tool attaches it to the answer); without
    a qubit, ask which one: each option is a complete question, so a click is answered directly."""
    metric = question.metric if question.metric in METRIC_TASKS else "t1"
    title = _title(metric)
    if question.qid is None:
        options = [f"Latest {title} figure of Q{qid}" for qid in FIGURE_QUBITS]
        arguments = {"question": f"Which qubit's latest {title} run should I show?", "options": options}
        return Calls([("ask_user", arguments)])
    if not seen:
        return Calls([("get_latest_task_result", {"task_name": METRIC_TASKS[metric], "qid": question.qid})])
    if _error(seen[0].output):
        return _failed_tool(seen[0])
    run = seen[0].output
    lines = [f"**{run.get('task_name')}** on Q{run.get('qid')}, run at {run.get('start_at')}:", ""]
    for name, entry in (run.get("output_parameters") or {}).items():
        if isinstance(entry, dict):
            lines.append(f"- {name} = {_num(entry.get('value'))} {entry.get('unit', '')}".rstrip())
    files = [str(name) for name in run.get("figures") or []]
    if files:
        lines.append(f"\nFigure files: {', '.join(files)}.")
    shown = bool(run.get("attached"))
    lines.append(
        "\nThe run's own figure is shown with this answer." if shown else "\nThis run recorded no figure."
    )
    return Answer(["\n".join(lines)])


def plan_task_analysis(question: Question) -> Answer:
    """The analysis sidebar: quote the recorded result; judging a fit or a figure needs a real model."""
    lines = (question.context or "").splitlines()
    header = lines[0].removeprefix(ANALYSIS_PREFIX) if lines else "the task result"
    params: dict[str, Any] = {}
    for line in lines:
        if line.startswith(OUTPUT_PARAMETERS):
            try:
                params = json.loads(line.removeprefix(OUTPUT_PARAMETERS))
            except json.JSONDecodeError:
                params = {}
    text = [f"**Result**: {header}"]
    for name, entry in params.items():
        if isinstance(entry, dict):
            error = f" ± {_num(entry['error'])}" if entry.get("error") else ""
            text.append(f"- {name} = {_num(entry.get('value'))}{error} {entry.get('unit', '')}".rstrip())
    text.append(
        "\nI am the **demo model** (scripted answers): I quote the recorded result but cannot judge its "
        "fit or figure. Configure a real model (`OPENAI_API_KEY`, or Ollama) for that analysis."
    )
    return Answer(["\n".join(text)])


def plan_exclude(question: Question, seen: Sequence[Seen]) -> Step:
    """Find the qubit's newest run of the metric's task, then propose excluding it: the write tool
    ends the turn with the approval card; nothing is written until the user approves."""
    task = METRIC_TASKS.get(question.metric or "t1", "CheckT1")
    if not seen:
        return Calls([("get_latest_task_result", {"task_name": task, "qid": question.qid})])
    if _error(seen[-1].output):
        return _failed_tool(seen[-1])
    run = seen[0].output
    reason = f"Excluded on request in chat (latest {task} of Q{question.qid})"
    return Calls([("exclude_task_result", {"task_id": run.get("task_id"), "reason": reason})])


def plan_undo(seen: Sequence[Seen]) -> Step:
    """Propose undoing the user's newest action (the tool ends the turn with the card)."""
    if not seen:
        return Calls([("undo_action", {"audit_id": None})])
    return _failed_tool(seen[0])


AFTER_ACTION = {
    "exclude_task_result": "Statistics now leave that result out.",
    "restore_task_result": "Statistics count that result again.",
    "note_task_result": "The result's note is set.",
    "label_ai_review": "The review's label is recorded.",
    "undo_action": "The document holds its earlier values again.",
}
"""What is true after each action ran (said only when the server reports it done)."""


def plan_action_decision(decided: Seen) -> Answer:
    """Summarise a decided action from the output of the call the server ran, never from the
    user's words: a message can only claim an action ran, this output says whether it did."""
    output = decided.output
    if output.get("declined"):
        return Answer([f"Understood: nothing was changed (**{decided.name}** was not run)."])
    message = str(output.get("message") or "")
    if output.get("done") is True:
        after = AFTER_ACTION.get(decided.name, "")
        return Answer(
            [
                f"{message}. {after} The change is recorded as `{output.get('audit_id')}`; say **undo "
                "that** to revert it."
            ]
        )
    return Answer([f"It was approved but not carried out: {message}."], assessment="warning")


CAN_ANSWER = (
    "I am the **demo model**: scripted answers, not a language model. I run the real tools on your "
    "data for questions shaped like these:\n\n"
    "- Which qubits lost T1 this week? (a parameter's loss across the chip over the last 7 days)\n"
    "- Show me the T1 heatmap\n"
    "- How is Q16? / What are Q16's current parameters?\n"
    "- Show T1 trend for Q16 / Is Q16's T1 dropping? / Show gate fidelity history for Q16 "
    "(its last 10 runs)\n"
    "- Compare T1 and T2 for Q16 (parameters of one qubit)\n"
    "- Compare Q3 and Q7 (two or more qubits; add parameter names to choose them)\n"
    "- Show me the latest T1 figure\n"
    "- Which calibration tasks failed in the latest execution, and why? (or in an execution you name)\n"
    "- Which tasks failed this week? / in the last 3 days? / on Q16 since 2026-11-20? / ever on Q16?\n"
    "- Which executions failed?\n"
    "- Exclude Q16's latest CheckT1 result from the statistics (with lab actions on: you approve it)"
)
REAL_MODEL = (
    "For free-form questions configure a real model: set `OPENAI_API_KEY`, or run Ollama "
    "(`ollama pull qwen3:8b`), then restart the server."
)


def plan_unknown(beyond: str | None, suggestions: Sequence[str]) -> Answer:
    """What the script can answer, after what in the question it cannot (a cause, a window…)."""
    listed = "".join(f"\n- {prompt}" for prompt in suggestions)
    also = f"\n\nThe suggested questions:{listed}" if listed else ""
    why = f": {beyond}" if beyond else ""
    return Answer([f"I cannot answer that one{why}.\n\n{CAN_ANSWER}{also}\n\n{REAL_MODEL}"])


Plan = Callable[[Question, Sequence[Seen]], Step]

PLANS: dict[str, Plan] = {
    "heatmap": plan_heatmap,
    "figure": plan_figure,
    "lost": plan_lost,
    "failed_tasks": plan_failed_tasks,
    "failed_executions": plan_failed_executions,
    "qubit": plan_qubit,
    "series": plan_series,
    "compare_qubits": plan_compare_qubits,
    "task_analysis": lambda question, _seen: plan_task_analysis(question),
    "exclude": plan_exclude,
    "undo": lambda _question, seen: plan_undo(seen),
}
"""The plan of each question kind; any other kind gets ``plan_unknown``."""


def next_step(question: Question, seen: Sequence[Seen], suggestions: Sequence[str]) -> Step:
    """The plan's next step for ``question`` after the tool outputs ``seen`` (in call order)."""
    plan = PLANS.get(question.kind)
    return plan_unknown(question.beyond, suggestions) if plan is None else plan(question, seen)
