"""``--record DIR``: one live run becomes an offline regression test (``replay.py`` runs it again).

Recording wraps the configured model at the adapter interface: every response it returns (its
messages and function calls; reasoning is the provider's and is not replayed) is saved per
question and attempt.

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
from qdash.engine.providers.base import DeltaSink, Model, ModelIdentity, ModelRequest
from qdash.engine.providers.factory import ModelRegistry

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


class RecordingModel(ModelIdentity):
    """A configured model whose every response is also given to a :class:`Recorder`."""

    def __init__(self, inner: Model, recorder: Recorder) -> None:
        super().__init__(inner.name, key=inner.key, capabilities=inner.capabilities, pricing=inner.pricing)
        self.inner = inner
        self.recorder = recorder

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
