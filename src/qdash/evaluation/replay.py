"""``--replay DIR``: a recorded live run (``recording.py``) served again, offline.

Replaying serves the recorded responses, in order, from the fake LLM server through the real SDK and
the whole assistant, so the tools run again on the lab and the answers are graded again: identical
grades unless the code between model and user changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qdash.evaluation.attempts import judge, with_model
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.fake_llm.records import RecordedRequest
from qdash.evaluation.fake_llm.script import FunctionCall as FakeCall
from qdash.evaluation.fake_llm.script import Message, OutputPart, Turn
from qdash.evaluation.lab import EvalLab
from qdash.evaluation.questions import Question
from qdash.evaluation.recording import Response
from qdash.evaluation.results import OnResult, QuestionResult
from qdash.evaluation.through_api import Outcome, assistant_client
from qdash.settings import ModelSettings

REPLAY_ALIAS = "eval-replay"


def load_recordings(directory: Path) -> dict[str, dict[str, Any]]:
    """question id → its recording; a missing or empty directory is refused with the fix."""
    files = sorted(directory.glob("*.json")) if directory.is_dir() else []
    if not files:
        raise FileNotFoundError(
            f"no recordings in {directory}; make them with `qdash eval --mode live --record DIR`"
        )
    loaded: dict[str, dict[str, Any]] = {}
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        loaded[str(data["question"])] = data
    return loaded


def _turn(response: Response) -> Turn:
    parts: list[OutputPart] = []
    for part in response.get("output", []):
        if part.get("type") == "function_call":
            parts.append(FakeCall(str(part["name"]), str(part.get("arguments") or "{}")))
        else:
            parts.append(Message(str(part.get("text", ""))))
    return Turn(output=tuple(parts), lenient=True)


class ReplayResponder:
    """A fake-server responder that serves each question's recorded responses in order."""

    def __init__(self, recordings: dict[str, dict[str, Any]]) -> None:
        self.queues = {
            data["text"]: [
                response
                for attempt in data["attempts"]
                if not attempt["timeout"]
                for response in attempt["responses"]
            ]
            for data in recordings.values()
        }

    def __call__(self, request: RecordedRequest) -> Turn:
        said = request.user_texts()
        for text in sorted(self.queues, key=len, reverse=True):
            if any(text in message for message in said):
                queue = self.queues[text]
                if not queue:
                    raise LookupError(f"the recording of {text!r} has no more responses")
                return _turn(queue.pop(0))
        raise LookupError(f"no recording for a request whose user said {said[:1]!r}")


async def run_replay(
    lab: EvalLab, questions: list[Question], directory: Path, on_result: OnResult | None = None
) -> list[QuestionResult]:
    """Re-run a recorded live run offline (fake LLM server, real SDK and assistant) and grade it."""
    from qdash.sandbox import stop_sandbox

    recordings = load_recordings(directory)
    chosen = [q for q in questions if q.id in recordings]
    truths = {q.id: lab.oracle.truth(q) for q in chosen}
    results: list[QuestionResult] = []
    with FakeLLMServer() as fake:
        fake.respond_with(ReplayResponder(recordings))
        model = ModelSettings(
            provider="openai_compatible",
            name="gpt-4.1-mini",
            api_style="chat_completions",
            base_url=fake.openai_base_url,
            api_key_env=None,
        )
        settings = with_model(lab.settings, REPLAY_ALIAS, model)
        try:
            async with assistant_client(lab, settings) as client:
                for question in chosen:
                    for attempt, recorded in enumerate(recordings[question.id]["attempts"]):
                        if recorded["timeout"]:
                            outcome = Outcome(None, str(recorded["timeout"]))
                        else:
                            outcome = await client.ask(question)
                        results.append(judge(question, truths[question.id], outcome, "replay", attempt))
                        if on_result is not None:
                            on_result(results[-1])
        finally:
            await stop_sandbox()
    return results
