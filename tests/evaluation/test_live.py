"""``live`` mode against the fake LLM server: wrong answers, a flaky one and a timeout are counted
exactly; pass^k is computed correctly; a recorded run replays offline with identical grades."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qdash.evaluation import EvalLab, Question, QuestionResult, load_questions
from qdash.evaluation.attempts import with_model
from qdash.evaluation.compose import compose_answer
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.live import LiveOptions, run_live
from qdash.evaluation.plan_model import Compose, PlanFollower, PlanScript
from qdash.evaluation.replay import run_replay
from qdash.evaluation.results import score
from qdash.evaluation.scripted import plan_script
from qdash.models.answer import Answer
from qdash.settings import ModelSettings
from tests.support.settings import fake_model

RIGHT = ("current-t1", "aborted-execution", "heatmap-t1")
WRONG = ("current-qubit-frequency", "neighbours-of-bad")
FLAKY = "ambiguous-qubit"
SLOW = "failure-reason"
K = 2


def wrong_answer(texts: list[str]) -> Answer:
    return Answer.text("It is Q99, 1.234 GHz.")


def alternating(compose: Compose) -> Compose:
    """Right on the first attempt, wrong on the second (a flaky model)."""
    calls = {"n": 0}

    def answer(texts: list[str]) -> Answer:
        calls["n"] += 1
        return compose(texts) if calls["n"] % 2 else wrong_answer(texts)

    return answer


def scripts(lab: EvalLab, questions: list[Question]) -> list[PlanScript]:
    built = []
    for question in questions:
        script = plan_script(lab, question, lab.oracle.truth(question))
        if question.id in WRONG:
            script = PlanScript(script.question, script.plan, wrong_answer)
        elif question.id == FLAKY:
            truth = lab.oracle.truth(question)
            script = PlanScript(
                script.question, script.plan, alternating(partial(compose_answer, truth, question.grader))
            )
        elif question.id == SLOW:
            script = PlanScript(script.question, script.plan, script.compose, delay_s=8.0)
        built.append(script)
    return built


async def test_live_counts_wrong_flaky_and_timed_out_answers_and_replays_identically(
    eval_lab: EvalLab, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    chosen = [q for q in load_questions() if q.id in (*RIGHT, *WRONG, FLAKY, SLOW)]
    fake_llm.respond_with(PlanFollower(scripts(eval_lab, chosen)))
    model = ModelSettings(**fake_model(fake_llm.openai_base_url, "gpt-4.1-mini"))
    settings = with_model(eval_lab.settings, "fake-live", model)
    options = LiveOptions(model="fake-live", k=K, concurrency=3, timeout_s=5.0, record=tmp_path / "rec")
    run = await run_live(eval_lab, chosen, settings, options)

    assert len(run.results) == len(chosen) * K and run.skipped == 0
    failed = sorted((r.id, r.attempt) for r in run.results if not r.passed)
    expected = sorted([(q, a) for q in (*WRONG, SLOW) for a in range(K)] + [(FLAKY, 1)])
    assert failed == expected
    timeouts = [r for r in run.results if r.error is not None]
    assert {(r.id, r.error) for r in timeouts} == {(SLOW, "timeout after 5 s")} and len(timeouts) == K
    overall = score("all", run.results)
    assert overall.pass_at_1 == pytest.approx((len(RIGHT) + 0.5) / len(chosen))
    assert overall.pass_hat_k == pytest.approx(len(RIGHT) / len(chosen))
    assert overall.errors == K

    replayed = await run_replay(eval_lab, chosen, tmp_path / "rec")
    grades = [(r.id, r.attempt, r.passed, r.detail, r.error) for r in run.results]
    assert [(r.id, r.attempt, r.passed, r.detail, r.error) for r in replayed] == grades


async def test_token_budget_stops_new_attempts_and_counts_them(
    eval_lab: EvalLab, fake_llm: FakeLLMServer
) -> None:
    chosen = [q for q in load_questions() if q.id in RIGHT]
    fake_llm.respond_with(PlanFollower([plan_script(eval_lab, q, eval_lab.oracle.truth(q)) for q in chosen]))
    model = ModelSettings(**fake_model(fake_llm.openai_base_url, "gpt-4.1-mini"))
    settings = with_model(eval_lab.settings, "fake-live", model)
    run = await run_live(eval_lab, chosen, settings, LiveOptions(model="fake-live", k=2, max_cost_tokens=1))
    assert len(run.results) == 1 and run.skipped == len(chosen) * 2 - 1


def attempt(question: str, passed: bool, n: int) -> QuestionResult:
    return QuestionResult(
        id=question, category="c", mode="live", passed=passed, detail="", truth="", attempt=n
    )


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=5), min_size=1, max_size=8))
def test_pass_hat_k_is_the_share_of_questions_right_every_time(outcomes: list[list[bool]]) -> None:
    results = [attempt(f"q{i}", ok, n) for i, tries in enumerate(outcomes) for n, ok in enumerate(tries)]
    scored = score("all", results)
    assert scored.pass_hat_k == pytest.approx(sum(all(tries) for tries in outcomes) / len(outcomes))
    assert scored.pass_at_1 == pytest.approx(sum(sum(t) / len(t) for t in outcomes) / len(outcomes))
    assert scored.pass_hat_k <= scored.pass_at_1 + 1e-12
    if all(len(tries) == 1 for tries in outcomes):
        assert scored.pass_hat_k == pytest.approx(scored.pass_at_1)
