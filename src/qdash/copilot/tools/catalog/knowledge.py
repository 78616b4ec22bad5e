"""``get_task_knowledge``: what a calibration task measures and how to judge its result.

Why a tool: ``task_knowledge.yaml`` is rendered into analysis prompts only (one task at a time); in
chat, "what does CheckRabi measure?" or "when is a T1 bad?" had no answer but the model's own
memory. The knowledge text comes with the lab's own criteria: the scoring thresholds of the task's
outputs (``scoring``) and the review limits (outputs a run must have, physical bounds,
largest relative error, smallest R²), each output in the display unit every tool shows it in
(``qdash.units``; bounds and thresholds converted with it).
"""

from __future__ import annotations

from typing import Any

from qdash.copilot.prompts.knowledge import load_task_knowledge
from qdash.copilot.scoring import display_of, threshold_rule
from qdash.copilot.tools.catalog.args import ShortText, ToolArgs
from qdash.copilot.tools.catalog.common import empty_result, resolve_chip, scope_of
from qdash.copilot.tools.catalog.history import task_name_of
from qdash.copilot.tools.spec import ToolContext, tool
from qdash.repositories import executions
from qdash.repositories.current_state import get_qubit
from qdash.units import shown_unit


class TaskKnowledgeArgs(ToolArgs):
    task_name: ShortText


@tool(label="Reading task knowledge")
def get_task_knowledge(ctx: ToolContext, args: TaskKnowledgeArgs) -> dict[str, Any]:
    """What a task measures, good/bad criteria → {knowledge,outputs,limits}

    The lab's knowledge of one calibration task and the criteria its results are judged by (in the
    units every tool shows).
    """
    name = task_name_of(args.task_name)
    knowledge = load_task_knowledge(ctx.settings.config_dir).get(name)
    if knowledge is None:
        return empty_result({"task_name": name}, hint="no stored knowledge for this task")
    scope = scope_of(ctx)
    chip = resolve_chip(scope, None)
    newest = executions.newest_completed_run(scope, chip, name)
    stored = (newest.get("output_parameters") or {}) if newest else {}
    if newest is None:  # not run lately: the units its listed outputs hold on a current qubit
        current = (get_qubit(scope, chip, "0") or {}).get("data") or {}
        stored = {output: current[output] for output in knowledge.review.outputs if output in current}
    limits = knowledge.review
    rows = []
    for parameter in dict.fromkeys([*limits.outputs, *stored]):
        threshold = ctx.settings.scoring.get(parameter)
        scale, unit = shown_unit(parameter, (stored.get(parameter) or {}).get("unit"))
        if not unit and threshold is not None:
            scale, unit = display_of(parameter, threshold)
        bounds = limits.bounds.get(parameter)
        rule = threshold_rule(parameter, threshold) if threshold is not None else None
        in_unit = [bound * scale for bound in bounds] if bounds else None  # stored units → the unit shown
        rows.append([parameter, unit or None, in_unit, rule])
    about = {
        "summary": knowledge.summary,
        "figure": knowledge.figure,
        "good": knowledge.good,
        "failures": list(knowledge.failures),
        "next": knowledge.next,
    }
    review = {"max_relative_error": limits.max_relative_error, "min_r2": limits.min_r2}
    return {
        "task_name": name,
        "knowledge": {key: value for key, value in about.items() if value},
        "outputs": {"cols": ["parameter", "unit", "bounds", "thresholds"], "rows": rows},
        **({"limits": shown} if (shown := {k: v for k, v in review.items() if v is not None}) else {}),
    }
