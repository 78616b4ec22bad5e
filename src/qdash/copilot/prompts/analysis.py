"""Analysis-mode prompt: one task result on one qubit, explained with task knowledge and context.

The system prompt holds what is fixed for a task (role, knowledge, thresholds, format); the facts
of this result (parameters, history, neighbours) go into the user turn, next to the figure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from qdash.copilot.prompts.knowledge import TaskKnowledge, render_knowledge
from qdash.copilot.prompts.parts import (
    DATA_CONVENTIONS,
    OUTPUT_FORMAT,
    TOOL_RULES,
    join_parts,
    language_part,
    thresholds_part,
)
from qdash.settings import Settings

ANALYSIS_ROLE = (
    "You are QDash Copilot in analysis mode: a calibration engineer reviewing one task result of a "
    "superconducting qubit. Judge whether the result is trustworthy, explain what the figure and "
    "numbers show, name likely causes of problems, and recommend concrete next steps. Use the tools "
    "when the context below is not enough (history, neighbours, provenance)."
)

IMAGE_INSTRUCTIONS = (
    "Images: the first image is the experiment figure of this result; further images are reference "
    "figures of a healthy result. Compare shape, fit quality and noise with the references. If no "
    "image is attached, rely on the numbers and say so."
)


@dataclass(frozen=True)
class AnalysisContext:
    """Everything known about the result under analysis, gathered before the model is asked."""

    task_name: str
    chip_id: str
    qid: str
    execution_id: str
    task_id: str
    status: str = ""
    message: str = ""
    input_parameters: dict[str, Any] = field(default_factory=dict)
    output_parameters: dict[str, Any] = field(default_factory=dict)
    run_parameters: dict[str, Any] = field(default_factory=dict)
    qubit_parameters: dict[str, Any] = field(default_factory=dict)
    recent_history: list[dict[str, Any]] = field(default_factory=list)
    neighbours: list[dict[str, Any]] = field(default_factory=list)
    couplings: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ResultPrompt:
    """The system prompt about one task result in one mode: the mode's ``role``; the language, the
    data conventions, the task's knowledge and the lab's thresholds (shared by analysis mode and
    reviews); then the mode's ``rules``, its ``images`` note (when images are sent) and how to
    ``answer``."""

    role: str
    rules: str
    images: str
    answer: str

    def instructions(
        self, settings: Settings, task_name: str, knowledge: TaskKnowledge | None, with_images: bool
    ) -> str:
        """The prompt for a result of ``task_name`` (fixed per task, so the prompt cache holds it)."""
        return join_parts(
            self.role,
            language_part(settings),
            DATA_CONVENTIONS,
            render_knowledge(task_name, knowledge),
            thresholds_part(settings),
            self.rules,
            self.images if with_images else "",
            self.answer,
        )


ANALYSIS_PROMPT = ResultPrompt(ANALYSIS_ROLE, TOOL_RULES, IMAGE_INSTRUCTIONS, OUTPUT_FORMAT)
"""Analysis mode: one result explained, with tools, in the dashboard's blocks format."""


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def render_analysis_context(context: AnalysisContext) -> str:
    """The facts of the result, as compact JSON lines the model can quote."""
    header = (
        f"Result under analysis: task {context.task_name} on qubit {context.qid} of chip {context.chip_id}, "
        f"execution {context.execution_id}, task_id {context.task_id}"
        + (f", status {context.status}" if context.status else "")
        + (f" ({context.message})" if context.message else "")
        + "."
    )
    sections = [header]
    for title, value in (
        ("Output parameters", context.output_parameters),
        ("Input parameters", context.input_parameters),
        ("Run parameters", context.run_parameters),
        ("Current qubit parameters", context.qubit_parameters),
        ("Recent runs of this task on this qubit (newest first)", context.recent_history),
        ("Neighbour qubits", context.neighbours),
        ("Couplings of this qubit", context.couplings),
    ):
        if value:
            sections.append(f"{title}: {_dump(value)}")
    return "\n".join(sections)


def images_note(task_name: str, experiment_figures: int, reference_alt_texts: Sequence[str]) -> str:
    """Which attached image is which, for the user turn: the references are ideal figures of a good
    result, not this qubit's data, and the model should not judge them as the result. Empty without
    references (the system prompt already says the first image is the experiment figure)."""
    if not reference_alt_texts:
        return ""
    first = experiment_figures + 1
    listed = "".join(f"\n- image {first + i}: {alt}" for i, alt in enumerate(reference_alt_texts))
    head = (
        f"Attached images: {experiment_figures} experiment figure(s) of this result first, then"
        if experiment_figures
        else "Attached images: no experiment figure, only"
    )
    return (
        f"{head} {len(reference_alt_texts)} reference figure(s) of a good {task_name} result "
        f"(ideal examples, not this qubit's data):{listed}"
    )
