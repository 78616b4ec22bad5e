"""One turn of the loop: rounds, tools, budgets, retries, the answer.

Why one object per turn: budgets, counters, collected tool outputs and usage belong to the turn, while the
:class:`~qdash.engine.agent.Agent` is reusable. The loop never checks a provider's name; it
reads the model's capability flags only.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

import orjson

from qdash.engine.events import (
    Event,
    Failed,
    Final,
    ReasoningSummary,
    Status,
    StatusTexts,
    TextDelta,
    ToolFinished,
    ToolStarted,
    Usage,
)
from qdash.engine.execution import CallResult, ToolRunner, error_output, result_summary
from qdash.engine.history import repair_history
from qdash.engine.items import (
    FunctionCall,
    FunctionCallOutput,
    Item,
    ModelResponse,
    TokenUsage,
    UserMessage,
)
from qdash.engine.limits import (
    FORCED_FINAL_MESSAGE,
    IN_FORMAT,
    LAST_ROUND_NOTE,
    REASON_TEXT,
    RunLimits,
    with_note,
)
from qdash.engine.output import OutputType
from qdash.engine.providers.base import Model, ModelError, ModelRequest, ToolDef
from qdash.engine.tool import RunContext, Tool, ToolOutput
from qdash.logging import get_logger

log = get_logger(__name__)

MAX_RETRY_AFTER_S = 120.0
ANSWERED_BY_TOOL = "awaiting_user"
"""``meta.stop_reason`` of a turn a tool ended with its own answer (``ask_user``)."""


class AgentSpec(Protocol):
    """What a turn reads of its agent. A protocol here, so the turn never imports the agent module
    (which creates turns): the engine's modules have no import cycle."""

    model: Model
    instructions: str
    tools: list[Tool]
    limits: RunLimits
    output_type: OutputType[Any]
    status_texts: StatusTexts
    stream: bool
    stateful: bool
    step: str


class _BudgetExhaustedError(Exception):
    """A budget ran out: go to the forced final answer with this stop reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Turn:
    """State and steps of one user turn."""

    def __init__(
        self,
        agent: AgentSpec,
        history: list[Item],
        user: UserMessage,
        emit: Callable[[Event], Awaitable[None]],
        *,
        cache_key: str | None = None,
        ran: Sequence[Item] = (),
        first: Sequence[tuple[FunctionCall, Tool]] = (),
        deps: Any = None,
    ) -> None:
        self.agent = agent
        self.model = agent.model
        self.limits = agent.limits
        self.items: list[Item] = [*history, user, *ran]
        self.emit = emit
        self.cache_key = cache_key
        self.tool_defs = [ToolDef(t.name, t.description, t.parameters) for t in agent.tools]
        self.context: RunContext[Any] = RunContext(deps)
        self.runner = self._runner(agent.tools)
        self.first = list(first)
        self.started = time.monotonic()
        self.deadline = self.started + self.limits.time_s
        self.rounds = 0
        self.tool_calls = 0
        self.tokens = 0
        self.usage = TokenUsage(0, 0, 0, 0)
        self.cost: float | None = 0.0
        self.outputs: list[ToolOutput] = []
        """The tools' outputs: call order within a batch, batches in turn order."""
        self.completed_labels: list[str] = []
        self.response_id: str | None = None
        self.stateful = agent.stateful
        self.sent_upto = 0  # stateful mode: items before this index are stored server-side

    def _runner(self, tools: Sequence[Tool]) -> ToolRunner:
        """A runner of ``tools`` under this turn's limits, context and counters."""
        return ToolRunner(
            tools,
            self.context,
            max_concurrency=self.limits.max_concurrency,
            timeout_s=self.limits.tool_timeout_s,
            log_payloads=self.limits.log_tool_payloads,
        )

    # --- the loop ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run to exactly one terminal event (``Final`` or ``Failed``); cancellation propagates."""
        try:
            final = await self._rounds()
        except ModelError as error:
            await self.emit(Failed(self.agent.step, error.detail, error.kind))
            return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("agent_turn_failed", model=self.model.name)
            await self.emit(Failed(self.agent.step, "Internal error while running the agent.", "internal"))
            return
        await self.emit(final)

    async def _rounds(self) -> Final | Failed:
        if self.first:  # the application's calls (an approved write), run and reported like any
            calls = [call for call, _ in self.first]
            self.items.extend(calls)  # as the model's calls are, before their outputs
            await self._execute(calls, self._runner([tool for _, tool in self.first]))
        while True:
            try:
                self._check_budgets()
                response = await self._request("auto", deadline=self.deadline)
            except _BudgetExhaustedError as stop:
                return await self._forced_final(stop.reason)
            calls = response.calls
            if not calls:
                if response.status == "incomplete" and not self.agent.output_type.usable(response.text):
                    return await self._forced_final("incomplete")
                return self._finish(response, "completed")
            if self.tool_calls + len(calls) > self.limits.max_tool_calls:
                self._refuse(calls, "Tool call limit reached; this call was not executed.")
                return await self._forced_final("max_tool_calls")
            answer = await self._execute(calls)
            if answer is not None:
                result = self.agent.output_type.tool_answer(answer, self.outputs)
                return self._final(result, ANSWERED_BY_TOOL)
            if self.runner.stop_reason:
                return await self._forced_final("repeated_calls", self.runner.stop_reason)

    def _check_budgets(self) -> None:
        if self.rounds >= self.limits.max_rounds:
            raise _BudgetExhaustedError("max_rounds")
        if time.monotonic() >= self.deadline:
            raise _BudgetExhaustedError("time_budget")
        estimate = _estimated_tokens(self.items[self.sent_upto :])
        if self.tokens + estimate > self.limits.max_tokens:
            raise _BudgetExhaustedError("token_budget")

    # --- model requests ------------------------------------------------------------------------

    def _build(self, tool_choice: str) -> ModelRequest:
        repaired = repair_history(self.items, origin=self.model.key)
        if repaired != self.items:
            self.items = repaired
        tools = self.tool_defs
        if tool_choice == "none" and not self.model.capabilities.honours_tool_choice:
            tools = []
        previous = self.response_id if self.stateful else None
        items = self.items[self.sent_upto :] if previous else self.items
        return ModelRequest(
            instructions=self.agent.instructions,
            items=list(items),
            tools=tools,
            tool_choice="none" if tool_choice == "none" else "auto",
            output=self.agent.output_type.format,
            stream=self.agent.stream,
            store=self.stateful,
            cache_key=self.cache_key,
            previous_response_id=previous,
        )

    async def _request(self, tool_choice: str, *, deadline: float) -> ModelResponse:
        """One round with loop-level retries; appends the response items and records usage."""
        self.rounds += 1
        await self.emit(self._thinking_status())
        streams = self.agent.stream and self.model.capabilities.streams_text
        on_text = self._on_text if streams else None
        attempt = 0
        while True:
            request = replace(self._build(tool_choice), retry_attempt=attempt)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _BudgetExhaustedError("time_budget")
            started = time.monotonic()
            try:
                async with asyncio.timeout(remaining):
                    response = await self.model.request(request, on_text)
            except TimeoutError:
                raise _BudgetExhaustedError("time_budget") from None
            except ModelError as error:
                if request.previous_response_id and "Previous response with id" in error.detail:
                    self._go_stateless()
                    continue
                delay = self._retry_delay(error, attempt, deadline)
                if delay is None:
                    raise
                attempt += 1
                self._go_stateless()
                log.warning("model_retry", model=self.model.name, attempt=attempt, kind=error.kind)
                await self.emit(Status("retrying", self.agent.status_texts.retrying, round=self.rounds))
                await asyncio.sleep(delay)
                continue
            log.info(
                "model_round",
                model=self.model.name,
                round=self.rounds,
                status=response.status,
                calls=len(response.calls),
                ms=round((time.monotonic() - started) * 1000, 1),
            )
            await self._record(response, request)
            return response

    def _go_stateless(self) -> None:
        """Continue the turn with full replay (never mixed with ``previous_response_id`` again)."""
        self.stateful = False
        self.response_id = None
        self.sent_upto = 0

    def _retry_delay(self, error: ModelError, attempt: int, deadline: float) -> float | None:
        if not error.retryable or attempt >= self.limits.max_retries:
            return None
        if error.retry_after is not None and error.retry_after <= MAX_RETRY_AFTER_S:
            delay = error.retry_after
        else:
            delay = min(8.0, self.limits.retry_base_s * 2**attempt) * (1 - random.random() * 0.25)
        return delay if time.monotonic() + delay < deadline else None

    async def _on_text(self, delta: str) -> None:
        await self.emit(TextDelta(delta, round=self.rounds))

    async def _record(self, response: ModelResponse, request: ModelRequest) -> None:
        for index, item in enumerate(response.items):
            if isinstance(item, FunctionCall) and not item.call_id:
                response.items[index] = replace(item, call_id=f"call_{self.rounds}_{index}")
        self.items.extend(response.items)
        for summary in response.reasoning_summaries:
            await self.emit(ReasoningSummary(summary, round=self.rounds))
        if response.response_id and self.stateful:
            self.response_id = response.response_id
            self.sent_upto = len(self.items)
        usage = response.usage
        if usage is None:
            self.tokens += _estimated_tokens(request.items)
        else:
            self.tokens += usage.total
            self.usage.add(usage)
        cost = self._cost(usage)
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        await self.emit(
            Usage(
                round=self.rounds,
                input_tokens=usage.input_tokens if usage else None,
                output_tokens=usage.output_tokens if usage else None,
                cached_input_tokens=usage.cached_input_tokens if usage else None,
                reasoning_tokens=usage.reasoning_tokens if usage else None,
                cost_usd=cost,
            )
        )

    def _cost(self, usage: TokenUsage | None) -> float | None:
        if usage is None or usage.input_tokens is None or usage.output_tokens is None:
            return None
        price = self.model.pricing
        cached = usage.cached_input_tokens or 0
        dollars = (
            (usage.input_tokens - cached) * price.input
            + cached * price.cached_input
            + usage.output_tokens * price.output
        )
        return dollars / 1_000_000

    def _thinking_status(self) -> Status:
        texts = self.agent.status_texts
        if self.completed_labels:
            message = texts.after_tool.format(label=self.completed_labels[-1].lower())
        else:
            message = texts.thinking
        return Status("thinking", message, completed_tools=list(self.completed_labels), round=self.rounds)

    # --- tools ---------------------------------------------------------------------------------

    async def _execute(
        self, calls: list[FunctionCall], runner: ToolRunner | None = None
    ) -> ToolOutput | None:
        """Run one batch (with the agent's tools, or ``runner``'s) and append its outputs; returns the
        output of the tool that ended the turn with its own answer (the first such call in model
        order), else ``None``."""
        runner = runner or self.runner
        self.tool_calls += len(calls)
        for call in calls:
            label = runner.label_of(call.name)
            message = self.agent.status_texts.tool_call.format(label=label)
            await self.emit(
                Status("tool_call", message, tool=call.name, call_id=call.call_id, round=self.rounds)
            )
            try:
                arguments = call.parsed_arguments()
            except ValueError:
                arguments = {}
            await self.emit(ToolStarted(call.call_id, call.name, label, arguments, round=self.rounds))

        async def done(result: CallResult) -> None:
            self.completed_labels.append(result.label)
            await self.emit(
                ToolFinished(
                    result.call.call_id,
                    result.call.name,
                    result.label,
                    result.duration_ms,
                    result.output.is_error,
                    result_summary(result.output.model_text),
                    result.output.data,
                )
            )

        results = await runner.run_batch(calls, done, deadline=self.deadline)
        last_round = self.rounds == self.limits.max_rounds - 1
        answer: ToolOutput | None = None
        for index, result in enumerate(results):
            self.outputs.append(result.output)
            if answer is None and result.output.ends_turn:
                answer = result.output
            text = result.output.model_text
            if last_round and index == len(results) - 1:
                text = with_note(text, LAST_ROUND_NOTE)
            self.items.append(FunctionCallOutput(result.call.call_id, text))
        return answer

    def _refuse(self, calls: list[FunctionCall], message: str) -> None:
        for call in calls:
            self.items.append(FunctionCallOutput(call.call_id, error_output(message).model_text))

    # --- the answer ----------------------------------------------------------------------------

    async def _forced_final(self, reason: str, reason_text: str | None = None) -> Final | Failed:
        text = reason_text or REASON_TEXT.get(reason, reason)
        in_format = IN_FORMAT if self.agent.output_type.format else ""
        self.items.append(UserMessage.text(FORCED_FINAL_MESSAGE.format(reason=text, in_format=in_format)))
        try:
            response = await self._request("none", deadline=self.deadline + self.limits.final_grace_s)
        except _BudgetExhaustedError:
            response = ModelResponse(items=[])
        except ModelError as error:
            # Budget exhaustion is not an error for the user: answer with what was completed.
            log.warning("forced_final_failed", model=self.model.name, kind=error.kind)
            response = ModelResponse(items=[])
        # Calls in the forced answer are never executed.
        return self._finish(response, reason, forced_reason=text)

    def _finish(
        self, response: ModelResponse, stop_reason: str, forced_reason: str | None = None
    ) -> Final | Failed:
        # A refusal is the model's answer too: show it rather than report an empty answer.
        output_type = self.agent.output_type
        result = output_type.parse(response.text, self.outputs)
        if result is None:
            result = output_type.parse(response.refusal, self.outputs)
        if result is None:
            if forced_reason is None:
                return Failed(self.agent.step, "The model returned an empty answer.", "empty_answer")
            done = ", ".join(self.completed_labels) or "none"
            message = f"I could not finish within the limits ({forced_reason}). Completed steps: {done}."
            result = output_type.fallback(message, self.outputs)
        return self._final(result, stop_reason)

    def _final(self, result: Any, stop_reason: str) -> Final:
        meta = {
            "stop_reason": stop_reason,
            "model": self.model.name,
            "rounds": self.rounds,
            "tool_calls": self.tool_calls,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "cached_input_tokens": self.usage.cached_input_tokens,
                "reasoning_tokens": self.usage.reasoning_tokens,
                "cost_usd": self.cost,
            },
        }
        return Final(result=result, stop_reason=stop_reason, meta=meta)


def _estimated_tokens(items: list[Item]) -> int:
    """About four characters of JSON per token. orjson writes the item dataclasses as they are:
    ``asdict`` deep-copied every value and ``json`` escaped every tool output again, each round."""
    return sum(len(orjson.dumps(item)) for item in items) // 4
