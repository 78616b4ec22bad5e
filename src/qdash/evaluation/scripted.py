"""``scripted`` mode: the full assistant, over HTTP and SSE, with a plan-following scripted model.

The model (``qdash.evaluation.plan_model.PlanFollower`` on the fake LLM server, reached through the
real openai SDK) calls each question's ideal plan and composes its answer from what it received
(``compose.py``). So a question passes only if the answer survives everything between the
database and the user: tools, wrappers, the wire, the loop, the blocks parser, chart attachment,
the SSE encoder. Target: every question whose answer ``visible`` mode finds.
"""

from __future__ import annotations

from functools import partial

from qdash.evaluation.attempts import judge, with_model
from qdash.evaluation.compose import compose_answer
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.lab import EvalLab
from qdash.evaluation.plan_model import PlanFollower, PlanScript, PlanStep
from qdash.evaluation.questions import Question, fill
from qdash.evaluation.results import OnResult, QuestionResult
from qdash.evaluation.through_api import assistant_client
from qdash.evaluation.truth import Truth
from qdash.logging import get_logger
from qdash.settings import ModelSettings

SCRIPTED_ALIAS = "eval-scripted"
log = get_logger(__name__)


def plan_script(lab: EvalLab, question: Question, truth: Truth, delay_s: float = 0.0) -> PlanScript:
    """The scripted model's part for one question: its filled plan and an honest composer."""
    facts = lab.oracle.facts
    steps = [PlanStep(step.tool, fill(step.args, facts)) for step in question.plan]
    compose = partial(compose_answer, truth, question.grader)
    return PlanScript(fill(question.text, facts), steps, compose, delay_s)


async def run_scripted(
    lab: EvalLab, questions: list[Question], on_result: OnResult | None = None
) -> list[QuestionResult]:
    """Every question through the full assistant with the plan-following model."""
    from qdash.sandbox import stop_sandbox

    truths = {q.id: lab.oracle.truth(q) for q in questions}
    follower = PlanFollower([plan_script(lab, q, truths[q.id]) for q in questions])
    results: list[QuestionResult] = []
    with FakeLLMServer() as fake:
        fake.respond_with(follower)
        model = ModelSettings(
            provider="openai", name="gpt-4.1-mini", base_url=fake.openai_base_url, api_key_env=None
        )
        settings = with_model(lab.settings, SCRIPTED_ALIAS, model)
        try:
            async with assistant_client(lab, settings) as client:
                for question in questions:
                    outcome = await client.ask(question)
                    results.append(judge(question, truths[question.id], outcome, "scripted"))
                    if on_result is not None:
                        on_result(results[-1])
        finally:
            await stop_sandbox()
        if fake.mismatches:  # each also failed its question with the fake's 500 as the reason
            log.warning("scripted_model_mismatches", mismatches=fake.mismatches)
    return results
