"""An in-process scripted model for loop tests, at the adapter interface.

Why at the adapter interface: loop behaviour (budgets, ordering, retries, events) can be tested in
milliseconds without HTTP; the wire itself is covered by tests against the fake server. The script
is a FIFO of steps, one per model call; every request is recorded as a deep copy; an unexpected
extra call fails loudly, and :meth:`ScriptedModel.assert_complete` fails when steps remain.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    Item,
    ModelResponse,
    Reasoning,
    TokenUsage,
)
from qdash.engine.providers import base
from qdash.engine.providers.base import DeltaSink, ModelCapabilities, ModelIdentity, Pricing

Responder = Callable[[base.ModelRequest], "Step | Awaitable[Step]"]
Step = Sequence[Item] | ModelResponse | base.ModelError | Responder


def message(text: str | dict[str, Any]) -> AssistantMessage:
    """An assistant message; a dict is serialised as JSON (e.g. a structured answer)."""
    return AssistantMessage(text if isinstance(text, str) else json.dumps(text))


def call(name: str, arguments: dict[str, Any] | str | None = None, call_id: str = "") -> FunctionCall:
    """A function call; dict arguments are serialised, a string is sent verbatim (bad JSON tests)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return FunctionCall(call_id, name, raw)


def reasoning(*summary: str, encrypted: str = "enc", origin: str = "scripted") -> Reasoning:
    return Reasoning(None, tuple(summary), encrypted, origin)


class ScriptedModel(ModelIdentity):
    """A model that replays a script; see the module docstring."""

    def __init__(
        self,
        steps: Sequence[Step],
        *,
        name: str = "scripted",
        capabilities: ModelCapabilities | None = None,
        pricing: Pricing | None = None,
        chunk_chars: int = 16,
    ) -> None:
        super().__init__(
            name,
            capabilities=capabilities or ModelCapabilities(supports_previous_response_id=True),
            pricing=pricing,
        )
        self._steps = list(steps)
        self._chunk = chunk_chars
        self._ids = 0
        self.calls: list[base.ModelRequest] = []

    @property
    def last_call(self) -> base.ModelRequest:
        return self.calls[-1]

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def assert_complete(self) -> None:
        if self._steps:
            raise AssertionError(f"{len(self._steps)} scripted step(s) were never requested")

    async def request(self, request: base.ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        self.calls.append(copy.deepcopy(request))
        if not self._steps:
            raise AssertionError(f"unexpected model call #{len(self.calls)}: the script is exhausted")
        step: Any = self._steps.pop(0)
        while callable(step) and not isinstance(step, base.ModelError):
            produced = step(request)
            step = await produced if inspect.isawaitable(produced) else produced
        if isinstance(step, base.ModelError):
            raise step
        response = step if isinstance(step, ModelResponse) else self._response(list(step), request)
        if on_text is not None:
            text = response.text
            for start in range(0, len(text), self._chunk):
                await on_text(text[start : start + self._chunk])
        return response

    def _response(self, items: list[Item], request: base.ModelRequest) -> ModelResponse:
        if not all(isinstance(i, AssistantMessage | FunctionCall | Reasoning) for i in items):
            raise AssertionError(f"malformed scripted step: {items!r}")
        out: list[Item] = []
        for item in items:
            if isinstance(item, FunctionCall) and request.tool_choice == "none":
                raise AssertionError("script calls a tool under tool_choice='none'")
            if isinstance(item, FunctionCall) and not item.call_id:
                self._ids += 1
                out.append(FunctionCall(f"call_s{self._ids}", item.name, item.arguments))
            else:
                out.append(item)
        chars = len(request.instructions) + sum(len(repr(i)) for i in request.items)
        usage = TokenUsage(chars // 4, sum(len(repr(i)) for i in out) // 4, 0, 0)
        self._ids += 1
        return ModelResponse(out, usage=usage, response_id=f"resp_s{self._ids}", model=self.name)
