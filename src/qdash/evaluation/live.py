"""``live`` mode: any configured model through the full assistant, k attempts per question.

Questions run concurrently (``concurrency``), the attempts of one question one after another (a
recording's responses stay in order). Each attempt has a deadline (``timeout_s``): a model that
does not answer in time counts as a failed attempt with the reason. ``max_cost_tokens`` stops
starting attempts once the model-reported tokens of the run reach it; the skipped attempts are
counted, never silently dropped. ``record`` saves every model response for ``replay.py`` (offline,
through the fake LLM server, which this module never imports: it is test support).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from qdash.evaluation.attempts import judge
from qdash.evaluation.lab import EvalLab
from qdash.evaluation.questions import Question, fill
from qdash.evaluation.recording import Recorder
from qdash.evaluation.results import ModelRun, ModelRunOptions, OnResult, QuestionResult
from qdash.evaluation.through_api import AssistantClient, Outcome, assistant_client
from qdash.settings import Settings


@dataclass
class LiveOptions(ModelRunOptions):
    """``model`` defaults to the configured default model; each question is asked ``k`` times."""

    k: int = 1


LiveRun = ModelRun[QuestionResult]


async def _stop_sandbox() -> None:
    from qdash.sandbox import stop_sandbox

    await stop_sandbox()


async def run_live(
    lab: EvalLab,
    questions: list[Question],
    settings: Settings,
    options: LiveOptions,
    on_result: OnResult | None = None,
) -> LiveRun:
    """Ask every question ``options.k`` times of the configured model; grade every answer."""
    truths = {q.id: lab.oracle.truth(q) for q in questions}
    texts = {q.id: fill(q.text, lab.oracle.facts) for q in questions}
    recorder = Recorder(texts) if options.record is not None else None
    run = LiveRun()
    gate = asyncio.Semaphore(options.concurrency)

    def spent() -> bool:
        return options.max_cost_tokens is not None and run.tokens >= options.max_cost_tokens

    async def attempts(client: AssistantClient, question: Question) -> None:
        async with gate:
            for attempt in range(options.k):
                if spent():
                    run.skipped += options.k - attempt
                    return
                if recorder is not None:
                    recorder.start(question.id, attempt)
                try:
                    async with asyncio.timeout(options.timeout_s):
                        outcome = await client.ask(question, options.model)
                except TimeoutError:
                    outcome = Outcome(
                        None, f"timeout after {options.timeout_s:g} s", seconds=options.timeout_s
                    )
                    if recorder is not None:
                        recorder.timed_out(question.id, attempt, str(outcome.error))
                run.tokens += outcome.tokens
                result = judge(question, truths[question.id], outcome, "live", attempt)
                run.results.append(result)
                if on_result is not None:
                    on_result(result)

    try:
        async with assistant_client(lab, settings, recorder) as client:
            await asyncio.gather(*(attempts(client, q) for q in questions))
    finally:
        await _stop_sandbox()
    if recorder is not None and options.record is not None:
        recorder.save(options.record)
    order = {q.id: n for n, q in enumerate(questions)}
    run.results.sort(key=lambda r: (order[r.id], r.attempt))
    return run
