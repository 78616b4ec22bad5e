"""``--record DIR`` / ``--replay DIR``: one live run becomes an offline regression test.

Recording wraps the configured model at the adapter interface: every response it returns (its
messages and function calls; reasoning is the provider's and is not replayed) is saved per
question and attempt. Replaying serves those responses, in order, from the fake LLM server through
the real SDK and the whole assistant, so the tools run again on the lab and the answers are graded
again: identical grades unless the code between model and user changed.

Files: ``DIR/<question id>.json`` = ``{"question", "text", "attempts": [{"responses": [response, …],
"timeout": null | "timeout after N s"}, …]}`` with ``response = {"output": [{"type": "message",
"text"} | {"type": "function_call", "name", "arguments"}]}``. A live attempt that timed out is a
fact about the live model's speed, which a replay cannot reproduce: it is replayed as the same
timeout, not re-asked.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from qdash.engine.items import AssistantMessage, FunctionCall, ModelResponse, UserMessage
from qdash.engine.providers.base import DeltaSink, Model, ModelCapabilities, ModelRequest, Pricing
from qdash.engine.providers.factory import ModelRegistry
from qdash.testing.fake_llm.records import RecordedRequest
from qdash.testing.fake_llm.script import FunctionCall as FakeCall
from qdash.testing.fake_llm.script import Message, OutputPart, Turn

Response = dict[str, Any]


class Recorder:
    """Responses per (question id, attempt), told apart by the question text in the user message."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        """question id → the text the user asked."""
        self.attempt: dict[str, int] = {}
        self.responses: dict[str, dict[int, list[Response]]] = defaultdict(lambda: defaultdict(list))
        self.timeouts: dict[tuple[str, int], str] = {}

    def start(self, question_id: str, attempt: int) -> None:
        """The next responses for ``question_id`` belong to ``attempt`` (attempts run one at a time)."""
        self.attempt[question_id] = attempt
        self.responses[question_id][attempt] = []

    def timed_out(self, question_id: str, attempt: int, error: str) -> None:
        self.timeouts[(question_id, attempt)] = error

    def question_of(self, request: ModelRequest) -> str | None:
        said = [item.text_content for item in request.items if isinstance(item, UserMessage)]
        for question_id, text in sorted(self.texts.items(), key=lambda kv: -len(kv[1])):
            if any(text in message for message in said):
                return question_id
        return None

    def add(self, request: ModelRequest, response: ModelResponse) -> None:
        question_id = self.question_of(request)
        if question_id is None:
            return
        output: list[dict[str, str]] = []
        for item in response.items:
            if isinstance(item, AssistantMessage) and item.text:
                output.append({"type": "message", "text": item.text})
            elif isinstance(item, FunctionCall):
                output.append({"type": "function_call", "name": item.name, "arguments": item.arguments})
        self.responses[question_id][self.attempt.get(question_id, 0)].append({"output": output})

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for question_id, attempts in self.responses.items():
            payload = {
                "question": question_id,
                "text": self.texts[question_id],
                "attempts": [
                    {"responses": attempts[n], "timeout": self.timeouts.get((question_id, n))}
                    for n in sorted(attempts)
                ],
            }
            path = directory / f"{question_id}.json"
            path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")


class RecordingModel:
    """A configured model whose every response is also given to a :class:`Recorder`."""

    def __init__(self, inner: Model, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def key(self) -> str:
        return self.inner.key

    @property
    def capabilities(self) -> ModelCapabilities:
        return self.inner.capabilities

    @property
    def pricing(self) -> Pricing:
        return self.inner.pricing

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        response = await self.inner.request(request, on_text)
        self.recorder.add(request, response)
        return response


class RecordingRegistry(ModelRegistry):
    """Another registry's models, each wrapped in a :class:`RecordingModel` (delegates the rest)."""

    def __init__(self, inner: ModelRegistry, recorder: Recorder) -> None:
        super().__init__({}, default="")  # every lookup goes to ``inner``
        self.inner = inner
        self.recorder = recorder
        self._wrapped: dict[str | None, RecordingModel] = {}

    @property
    def aliases(self) -> list[str]:
        return self.inner.aliases

    def get(self, alias: str | None = None) -> Model:
        inner = self.inner.get(alias)
        wrapped = self._wrapped.get(alias)
        if wrapped is None or wrapped.inner is not inner:
            wrapped = self._wrapped[alias] = RecordingModel(inner, self.recorder)
        return wrapped

    async def aclose(self) -> None:
        self._wrapped = {}
        await self.inner.aclose()


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
