"""The agent: a model, tools and instructions; one call to :meth:`Agent.run_stream` runs one turn.

Why events through a queue: streamed text arrives inside the provider's request, while the caller
consumes an async iterator; a worker task runs the turn and the iterator drains its queue, so
closing or cancelling the iterator cancels the model request and any tool still running.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, cast

from qdash.engine.events import Event, Failed, Final, Status, StatusTexts, ToolStarted
from qdash.engine.function_tool import FunctionTool
from qdash.engine.items import FunctionCall, Item, UserMessage
from qdash.engine.limits import RunLimits
from qdash.engine.output import OutputType, TextOutput
from qdash.engine.providers.base import Model
from qdash.engine.tool import Tool
from qdash.engine.turn import Turn

TEXT_OUTPUT = TextOutput()
"""The default answer: the model's final text."""
DEFAULT_STATUS = StatusTexts()

StatusCallback = Callable[[Status], Awaitable[None] | None]
ToolCallCallback = Callable[[str, dict[str, Any]], Awaitable[None] | None]


_wrapped: weakref.WeakKeyDictionary[Callable[..., Any], FunctionTool] = weakref.WeakKeyDictionary()
"""Plain functions wrapped once: building the schema costs milliseconds, and agents are per request."""


_tool_types: dict[type, bool] = {}
"""Whether instances of a type satisfy :class:`Tool`: a runtime protocol check inspects every member
(~30 µs), and an agent per request checks each of its tools."""


def _is_tool(candidate: object) -> bool:
    kind = type(candidate)
    known = _tool_types.get(kind)
    if known is None:
        known = _tool_types[kind] = isinstance(candidate, Tool)
    return known


def as_tool(candidate: Tool | Callable[..., Any]) -> Tool:
    """A :class:`Tool` as is; a plain typed function wrapped (once) as a :class:`FunctionTool`."""
    if _is_tool(candidate):
        return cast(Tool, candidate)
    if callable(candidate):
        tool = _wrapped.get(candidate)
        if tool is None:
            tool = _wrapped[candidate] = FunctionTool(candidate)
        return tool
    raise TypeError(f"not a tool: {candidate!r}")


class Agent:
    """A reusable agent definition; it holds no per-turn state, so one instance serves many turns."""

    def __init__(
        self,
        model: Model,
        *,
        instructions: str = "",
        tools: Sequence[Tool | Callable[..., Any]] = (),
        limits: RunLimits | None = None,
        output_type: OutputType[Any] = TEXT_OUTPUT,
        status_texts: StatusTexts = DEFAULT_STATUS,
        stream: bool = True,
        stateful: bool = False,
        step: str = "run_agent",
    ) -> None:
        self.model = model
        self.instructions = instructions
        self.tools: list[Tool] = [as_tool(t) for t in tools]
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names: {', '.join(duplicates)}")
        local = model.capabilities.local
        self.limits = limits or RunLimits(max_rounds=16 if local else 10)
        self.output_type = output_type
        self.status_texts = status_texts
        self.stream = stream
        if stateful and not model.capabilities.supports_previous_response_id:
            raise ValueError(f"model {model.name} does not support previous_response_id (stateful mode)")
        self.stateful = stateful
        self.step = step

    async def run_stream(
        self,
        message: str | UserMessage,
        *,
        history: Sequence[Item] = (),
        cache_key: str | None = None,
        ran: Sequence[Item] = (),
        first: Sequence[tuple[FunctionCall, Tool]] = (),
        deps: Any = None,
    ) -> AsyncIterator[Event]:
        """Run one turn; yield events, ending with exactly one ``Final`` or ``Failed``.

        ``cache_key`` (e.g. a hash of project + session) is sent as ``prompt_cache_key`` where the
        wire supports it, so turns of one conversation land on the same prompt cache.
        ``ran``: calls the application settled for this message without running anything, with
        their outputs (a declined proposal); they follow the message, unreported.
        ``first``: calls the engine runs before the first round, each with the tool that runs it
        (not offered to the model): run, reported and recorded like the model's own calls (a lab
        action the user approved, carried out as the call the model proposed).
        ``deps``: the application's state for this turn, handed to every tool call as
        ``RunContext.deps`` (the agent itself is shared by turns and holds none).
        """
        queue: asyncio.Queue[Event | None] = asyncio.Queue()  # None: the turn's task has ended

        async def emit(event: Event) -> None:
            queue.put_nowait(event)

        user = UserMessage.text(message) if isinstance(message, str) else message
        turn = Turn(self, list(history), user, emit, cache_key=cache_key, ran=ran, first=first, deps=deps)
        worker = asyncio.create_task(turn.run())
        # The worker's end is queued behind its last event, so one ``queue.get()`` per event suffices.
        worker.add_done_callback(lambda _task: queue.put_nowait(None))
        try:
            while True:
                event = await queue.get()
                if event is None:
                    worker.result()  # re-raises an unexpected crash; Turn.run itself never ends silently
                    raise RuntimeError("the agent turn ended without a terminal event")
                yield event
                if isinstance(event, Final | Failed):
                    return
        finally:
            if not worker.done():
                worker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await worker

    async def run(
        self,
        message: str | UserMessage,
        *,
        history: Sequence[Item] = (),
        on_status: StatusCallback | None = None,
        on_tool_call: ToolCallCallback | None = None,
        cache_key: str | None = None,
        deps: Any = None,
    ) -> Final | Failed:
        """Run one turn and return its terminal event; the callbacks see each status and tool call."""
        terminal: Final | Failed | None = None
        async for event in self.run_stream(message, history=history, cache_key=cache_key, deps=deps):
            if isinstance(event, Final | Failed):
                terminal = event
            elif on_status is not None and isinstance(event, Status):
                await _maybe_await(on_status(event))
            elif on_tool_call is not None and isinstance(event, ToolStarted):
                await _maybe_await(on_tool_call(event.tool, event.arguments))
        if terminal is None:
            raise RuntimeError("run_stream ended without a terminal event")
        return terminal


async def _maybe_await(value: Awaitable[None] | None) -> None:
    if inspect.isawaitable(value):
        await value
