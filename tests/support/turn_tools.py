"""The tools of one turn as callables by name: ``await one_turn(service)["get_qubit_params"](args)``.

Why: a test calls tools the way a model's turn does — in one turn (the breaker's counts, the chart
ids and the turn's data store shared), under the engine's timeout and failure policy — without a
model. Each call goes through ``CopilotDataService.call``, the production path outside a turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.turn import TurnState
from qdash.engine.tool import RunContext, ToolOutput

ToolCall = Callable[[dict[str, Any]], Awaitable[ToolOutput]]


class OneTurn(Mapping[str, ToolCall]):
    """The service's tools bound to one turn (``turn``), in the order the model sees them."""

    def __init__(self, service: CopilotDataService, *, chat: bool = False) -> None:
        self.service = service
        self.chat = chat
        self.run: RunContext[TurnState] = service.run_context()
        self.turn: TurnState = self.run.deps
        self.names = [tool.name for tool in service.tools(chat=chat)]

    def __getitem__(self, name: str) -> ToolCall:
        if name not in self.names:
            raise KeyError(name)

        async def call(arguments: dict[str, Any]) -> ToolOutput:
            return await self.service.call(name, arguments, self.run, chat=self.chat)

        return call

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def one_turn(service: CopilotDataService, *, chat: bool = False) -> OneTurn:
    return OneTurn(service, chat=chat)
