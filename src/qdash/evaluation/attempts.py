"""One attempt at a question, graded; and settings that point the assistant at one model.

Shared by every mode that asks the full assistant (scripted, live, replay) and by the review suite;
kept apart from ``scripted.py`` because that mode runs the fake LLM server
(``qdash.evaluation.fake_llm``), which ``live`` must not import.
"""

from __future__ import annotations

import json

from qdash.evaluation.graders import AnswerSheet, grade
from qdash.evaluation.questions import Question
from qdash.evaluation.results import Mode, QuestionResult
from qdash.evaluation.through_api import Outcome
from qdash.evaluation.truth import Truth
from qdash.settings import ModelSettings, Settings


def with_model(settings: Settings, alias: str, model: ModelSettings) -> Settings:
    """``settings`` whose only (and default) model is ``model`` under ``alias``."""
    copilot = settings.copilot.model_copy(update={"models": {alias: model}, "default_model": alias})
    return settings.model_copy(update={"copilot": copilot})


def judge(question: Question, truth: Truth, outcome: Outcome, mode: Mode, attempt: int = 0) -> QuestionResult:
    """Grade one answered (or failed) attempt."""
    if outcome.result is None:
        passed, detail = False, f"no answer: {outcome.error}"
    else:
        passed, detail = grade(truth, question.grader, AnswerSheet.from_result(outcome.result))
    return QuestionResult(
        id=question.id,
        category=question.category,
        mode=mode,
        passed=passed,
        detail=detail,
        truth=truth.describe(),
        tool_calls=len(outcome.tool_calls),
        data_calls=sum(name != "execute_python_analysis" for name in outcome.tool_calls),
        sandbox="execute_python_analysis" in outcome.tool_calls,
        needs_data=bool(question.plan) or question.analysis is not None,
        tool_tokens=outcome.tokens,
        seconds=outcome.seconds,
        answer=json.dumps(outcome.result.wire(), ensure_ascii=False)[:2000]
        if outcome.result is not None
        else "",
        attempt=attempt,
        error=outcome.error,
    )
