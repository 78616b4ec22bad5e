"""Running one response's tool calls: concurrently, capped, results in the model's order.

Why every failure becomes an output: the model can recover from a bad argument or a failing tool if
it hears about it, while an exception would end the whole turn. Texts are exact
because prompts and tests rely on them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from qdash.engine.items import FunctionCall
from qdash.engine.tool import RunContext, Tool, ToolOutput
from qdash.logging import get_logger

log = get_logger(__name__)

MAX_CONSECUTIVE_FAILURES = 3
SUMMARY_CHARS = 160
ONE_ANSWER = (
    "Not run: one question or proposal per answer, and {first} already ends this turn. Ask again "
    "once the user has decided it."
)


TIMEOUT_HINT = "Ask for less (fewer qubits, a shorter window) or try later."


def error_output(message: str, hint: str | None = None) -> ToolOutput:
    payload = {"error": message, "hint": hint} if hint else {"error": message}
    return ToolOutput(json.dumps(payload, ensure_ascii=False), is_error=True)


def result_summary(model_text: str, limit: int = SUMMARY_CHARS) -> str:
    """One short line of what a tool returned, for the live trace: the error message of a failed
    call, else the start of its JSON (whitespace collapsed, cut at ``limit`` characters with …)."""
    try:
        data = json.loads(model_text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        text = f"error: {data['error']}"
    else:
        text = model_text
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass
class CallResult:
    """One executed (or refused) call."""

    call: FunctionCall
    output: ToolOutput
    label: str
    duration_ms: float


@dataclass
class ToolRunner:
    """Executes batches for one turn: the one timeout and failure policy of every tool call.

    The turn's counters live in ``context`` (handed to every call). Repeated identical calls are
    the tools' business (the copilot's breaker compares normalised arguments, ``Q16`` = ``16``); a
    tool stops the turn through ``ToolOutput.stop_reason``."""

    tools: Sequence[Tool]
    context: RunContext[Any]
    max_concurrency: int = 8
    timeout_s: float = 20.0
    log_payloads: bool = False
    stop_reason: str | None = None
    """Set when a tool asks the loop to force the final answer."""

    def __post_init__(self) -> None:
        self._by_name = {tool.name: tool for tool in self.tools}

    def label_of(self, name: str) -> str:
        tool = self._by_name.get(name)
        return tool.label if tool is not None else name

    async def run_batch(
        self,
        calls: list[FunctionCall],
        on_done: Callable[[CallResult], Awaitable[None]] | None = None,
        deadline: float | None = None,
    ) -> list[CallResult]:
        """Run ``calls`` concurrently (at most ``max_concurrency`` at once); results in call order.

        Of the calls that end the turn with their own answer, only the first in the model's order
        runs; the others are refused unrun, so nothing stands behind an answer but what it shows
        (a proposal stored beside a question would be approved by the answer to the question)."""
        semaphore = asyncio.Semaphore(self.max_concurrency)
        results: list[CallResult | None] = [None] * len(calls)
        extra = self._extra_answers(calls)

        async def one(index: int, call: FunctionCall) -> None:
            async with semaphore:
                result = (
                    CallResult(call, error_output(extra[index]), self.label_of(call.name), 0.0)
                    if index in extra
                    else await self._run_one(call, deadline)
                )
            results[index] = result
            if on_done is not None:
                await on_done(result)

        async with asyncio.TaskGroup() as group:
            for index, call in enumerate(calls):
                group.create_task(one(index, call))
        return [r for r in results if r is not None]

    def _extra_answers(self, calls: list[FunctionCall]) -> dict[int, str]:
        """The turn-ending calls after the first one, by index, with why they are not run."""
        enders = [
            index
            for index, call in enumerate(calls)
            if (tool := self._by_name.get(call.name)) is not None and tool.ends_turn
        ]
        if len(enders) < 2:
            return {}
        first = calls[enders[0]].name
        return {index: ONE_ANSWER.format(first=first) for index in enders[1:]}

    async def _run_one(self, call: FunctionCall, deadline: float | None) -> CallResult:
        started = time.monotonic()
        output = await self._execute(call, deadline)
        duration = (time.monotonic() - started) * 1000
        failures = self.context.failures
        if output.is_error:
            failures[call.name] += 1
        elif call.name in self._by_name:
            failures[call.name] = 0
        fields: dict[str, object] = {"tool": call.name, "call_id": call.call_id, "ms": round(duration, 1)}
        if self.log_payloads:
            fields.update(arguments=call.arguments, output=output.model_text[:2000])
        log.info("tool_call", is_error=output.is_error, **fields)
        return CallResult(call, output, self.label_of(call.name), duration)

    async def _execute(self, call: FunctionCall, deadline: float | None) -> ToolOutput:
        tool = self._by_name.get(call.name)
        if tool is None:
            names = ", ".join(self._by_name)
            return error_output(f"Unknown tool: {call.name}. Available tools: {names}")
        if self.context.failures[call.name] >= MAX_CONSECUTIVE_FAILURES:
            return error_output(
                f"{call.name} failed {MAX_CONSECUTIVE_FAILURES} times in this turn; "
                "stop calling it and answer with what you have."
            )
        try:
            arguments = call.parsed_arguments()
        except json.JSONDecodeError as exc:
            return error_output(
                f"Invalid JSON in arguments for {call.name}: {exc}. Please try again with valid JSON."
            )
        except ValueError as exc:
            return error_output(f"Invalid arguments for {call.name}: {exc}")
        timeout = self.timeout_s
        if deadline is not None:
            timeout = max(0.0, min(timeout, deadline - time.monotonic()))
        self.context.calls[call.name] += 1
        try:
            async with asyncio.timeout(timeout):
                output = await tool(self.context, arguments)
        except TimeoutError:
            return error_output(f"Tool {call.name} timed out after {timeout:.3g} s", TIMEOUT_HINT)
        except Exception as exc:
            log.exception("tool_failed", tool=call.name, call_id=call.call_id)
            return error_output(f"{type(exc).__name__}: {exc}")
        if output.stop_reason:
            self.stop_reason = output.stop_reason
        return output
