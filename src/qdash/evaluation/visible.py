"""``visible`` mode: run each question's ideal plan through the real executors and wrappers, no model.

It answers "could a perfect reader answer from what the tools show?": each plan step goes through
the same ``CopilotDataService`` executors a chat turn uses (validation, data store, chart
interception, compaction, size guard), and the evidence reader (``evidence.py``) looks for the
oracle's answer in the texts. Analysis-mode questions see the analysis context the assistant
renders. Tokens are counted with o200k (``bpe_openai``, offline).
"""

from __future__ import annotations

import json
import time
from functools import cache
from typing import Any

import bpe_openai

from qdash.copilot.analysis_context import gather_analysis_inputs
from qdash.copilot.prompts import render_analysis_context
from qdash.copilot.requests import AnalyzeRequest
from qdash.copilot.service import ANALYSIS_TOOL, CopilotDataService
from qdash.copilot.tools.output import output_data
from qdash.copilot.tools.spec import SandboxRunner, ToolContext
from qdash.evaluation.evidence import Seen, visible
from qdash.evaluation.lab import EvalLab
from qdash.evaluation.questions import Question, fill
from qdash.evaluation.results import OnResult, QuestionResult
from qdash.uploads import UploadStore


@cache
def _encoding() -> Any:
    """o200k, loaded on first use (≈ 0.2 s; every ``qdash`` command imports this module)."""
    return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text))


def chart_types(figure: dict[str, Any]) -> list[str]:
    """Plotly trace types of one figure (``heatmap``, ``scatter``…)."""
    return [
        str(trace.get("type", "scatter")) for trace in figure.get("data") or [] if isinstance(trace, dict)
    ]


def session_for(question: Question) -> str:
    return f"eval-{question.id}"


def upload_for(lab: EvalLab, question: Question) -> None:
    """Store the question's CSV in its session, as the dashboard's upload would (blocking)."""
    if question.upload is None:
        return
    store = UploadStore(lab.db, lab.settings.uploads)
    store.save(
        lab.project_id, lab.username, session_for(question), question.upload, lab.oracle.upload_csv(question)
    )


async def run_plan(
    lab: EvalLab, question: Question, sandbox: SandboxRunner | None = None
) -> tuple[list[Seen], list[str]]:
    """What the model would see following the ideal plan, and the tools called."""
    service = CopilotDataService(
        ToolContext(
            lab.db,
            lab.project_id,
            lab.username,
            lab.settings,
            session_for(question) if question.upload else None,
            sandbox=sandbox,
            uploads=UploadStore(lab.db, lab.settings.uploads),
        )
    )
    seen: list[Seen] = []
    if question.analysis is not None:
        target = fill(question.analysis.model_dump(), lab.oracle.facts)
        request = AnalyzeRequest(message=question.text, **target)
        inputs = await gather_analysis_inputs(service, request, None, lab.settings.analysis.max_image_bytes)
        seen.append(Seen(render_analysis_context(inputs.context)))
    turn = service.run_context()
    called: list[str] = []
    for step in question.plan:
        output = await service.call(step.tool, fill(step.args, lab.oracle.facts), turn)
        charts = [kind for figure in output_data(output).charts for kind in chart_types(figure)]
        seen.append(Seen(output.model_text, charts))
        called.append(step.tool)
    return seen, called


async def evaluate_visible(
    lab: EvalLab, question: Question, sandbox: SandboxRunner | None = None
) -> QuestionResult:
    """One question in ``visible`` mode."""
    started = time.perf_counter()
    truth = lab.oracle.truth(question)
    upload_for(lab, question)
    seen, called = await run_plan(lab, question, sandbox)
    ok, reason = visible(truth, question.grader, seen)
    data_calls = sum(name != ANALYSIS_TOOL for name in called)
    return QuestionResult(
        id=question.id,
        category=question.category,
        mode="visible",
        passed=ok,
        detail="answer shown" if ok else reason,
        truth=truth.describe(),
        tool_calls=len(called),
        data_calls=data_calls,
        sandbox=ANALYSIS_TOOL in called,
        needs_data=bool(called) or question.analysis is not None,
        tool_tokens=sum(count_tokens(s.text) for s in seen),
        seconds=time.perf_counter() - started,
        answer=json.dumps([s.text for s in seen])[:2000],
    )


async def run_visible(
    lab: EvalLab, questions: list[Question], on_result: OnResult | None = None
) -> list[QuestionResult]:
    """Every question in ``visible`` mode; the sandbox runs only if a plan needs it."""
    from qdash.sandbox import start_sandbox, stop_sandbox

    needs_sandbox = any(step.tool == ANALYSIS_TOOL for q in questions for step in q.plan)
    sandbox = await start_sandbox(lab.settings.sandbox) if needs_sandbox else None
    try:
        results = []
        for question in questions:
            results.append(await evaluate_visible(lab, question, sandbox))
            if on_result is not None:
                on_result(results[-1])
        return results
    finally:
        if sandbox is not None:
            await stop_sandbox()
