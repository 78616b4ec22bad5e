"""The tool pipeline: every wrapper around one validated call, in order, listed here and only here.

Why one list: each behaviour is a small unit with one signature, tested alone with a fake ``next``
or a hand-made outcome (``tests/copilot/tools/test_pipeline.py``), and the order is read in one
place instead of being spread over the executor's code. Two kinds, because they run in different
places:

- ``GUARDS`` run on the event loop before the implementation: ``await guard(call, next)`` either
  refuses (a ``ToolOutput`` error) or returns ``await next(call)``.
- ``STEPS`` post-process the implementation's result on the tool pool (they may write to MongoDB):
  ``step(call, outcome) -> outcome``. An error result goes through ``ERROR_STEPS`` instead.

The executor (``executor.py``) validates the arguments, builds the :class:`Call`, runs the guards,
executes the implementation (thread pool, timeout) and then the steps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic import BaseModel

from qdash.copilot.tools.jsonsafe import dumps, json_safe
from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, ToolSpec
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.breaker import check_breaker
from qdash.copilot.tools.wrappers.charts import intercept_charts
from qdash.copilot.tools.wrappers.compaction import compact
from qdash.copilot.tools.wrappers.data_store import DataStore, summarise
from qdash.copilot.tools.wrappers.rate_limit import check_rate_limit
from qdash.copilot.tools.wrappers.size_guard import guard_size
from qdash.engine.tool import RunContext, ToolOutput
from qdash.models.answer import Block

BREAKER_REASON = "Detected repeated identical tool calls"
FAILURE_HINT = (
    "This is a server-side problem, not your arguments; answer with what you have or try another tool."
)


def error_payload(message: str, hint: str | None = None) -> dict[str, Any]:
    return {"error": message, "hint": hint} if hint else {"error": message}


def refused(payload: dict[str, Any], stop_reason: str | None = None) -> ToolOutput:
    """An error the model sees as the call's result (``stop_reason`` forces the final answer)."""
    return ToolOutput(dumps(payload), is_error=True, stop_reason=stop_reason)


@dataclass(frozen=True)
class Call:
    """One call with validated arguments, and everything a wrapper may read."""

    spec: ToolSpec
    run: RunContext[TurnState]
    """The turn: the engine's counters, the copilot's ``TurnState`` as ``run.deps``."""
    args: BaseModel
    normalised: dict[str, Any]
    """The validated arguments as JSON (``Q16`` → ``"16"``): what the breaker and store keys see."""
    clamped: dict[str, Any]
    """Integers that arrived out of range, with the bound used instead (reported as ``_clamped``)."""

    @property
    def turn(self) -> TurnState:
        return self.run.deps

    @property
    def ctx(self) -> ToolContext:
        return self.run.deps.context

    @property
    def store(self) -> DataStore:
        return self.run.deps.store


Next = Callable[[Call], Awaitable[ToolOutput]]


class Guard(Protocol):
    async def __call__(self, call: Call, next: Next) -> ToolOutput: ...


async def breaker(call: Call, next: Next) -> ToolOutput:
    """The same normalised call a third time this turn is refused, and the turn is made to end."""
    limit = call.ctx.settings.tools.max_identical_calls
    refusal = check_breaker(call.turn.signatures, call.spec.name, call.normalised, limit)
    if refusal is not None:
        return refused(refusal, stop_reason=BREAKER_REASON)
    return await next(call)


async def rate_limit(call: Call, next: Next) -> ToolOutput:
    """Rate-limited tools are refused past ``tools.timeseries_call_limit`` calls this turn."""
    if call.spec.rate_limited:
        limit = call.ctx.settings.tools.timeseries_call_limit
        refusal = check_rate_limit(call.run.calls[call.spec.name], call.spec.name, limit)
        if refusal is not None:
            return refused(refusal)
    return await next(call)


GUARDS: tuple[Guard, ...] = (breaker, rate_limit)


async def through(guards: Sequence[Guard], call: Call, last: Next) -> ToolOutput:
    """``guards[0]`` around ``guards[1]`` around … around ``last``."""
    if not guards:
        return await last(call)
    first, rest = guards[0], guards[1:]
    return await first(call, lambda inner: through(rest, inner, last))


@dataclass(frozen=True)
class Outcome:
    """A result on its way to the model: ``result`` is what the data store keeps, ``model`` what
    the model will see; figures (then ``charts`` with their ids), attachments and the answer
    bypass the model."""

    result: dict[str, Any]
    model: dict[str, Any]
    is_error: bool = False
    figures: list[dict[str, Any]] = field(default_factory=list)
    charts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    attachments: list[Block] = field(default_factory=list)
    answer: list[Block] | None = None
    stored_key: str | None = None

    @classmethod
    def of(cls, name: str, raw: Any) -> Outcome:
        """The implementation's return value (a dict or a ``ToolResult``), JSON-safe; anything else
        is a failure."""
        extra = raw if isinstance(raw, ToolResult) else ToolResult({})
        data = raw.data if isinstance(raw, ToolResult) else raw
        if not isinstance(data, dict):
            data = error_payload(f"Tool {name} returned {type(data).__name__}, not an object", FAILURE_HINT)
        result: dict[str, Any] = json_safe(data)
        # sandbox results carry "error": null on success
        is_error = result.get("error") is not None
        return cls(result, result, is_error, extra.charts, [], extra.attachments, extra.answer)


Step = Callable[[Call, Outcome], Outcome]


SHOWN_NOTE = "shown to the user with your answer (do not describe it; you cannot see it)"


def attachments(call: Call, out: Outcome) -> Outcome:
    """Attached blocks go to the answer; the model learns each is shown (so it neither repeats the
    reference nor describes an image it never saw)."""
    if not out.attachments:
        return out
    shown = [f"{getattr(block, 'content', None) or block.type}: {SHOWN_NOTE}" for block in out.attachments]
    return replace(out, model={**out.model, "attached": shown})


def data_store(call: Call, out: Outcome) -> Outcome:
    """A stored tool's full result goes to the data store; the model sees a summary."""
    if not call.spec.stored:
        return out
    key = call.spec.key_for(call.normalised)
    put = call.store.put(key, out.result)
    note = None if put.stored else f"Full data was not stored ({put.reason}); ask for less data."
    stored_key = key if put.stored else None
    model = summarise(out.result, stored_key, call.store.keys(), note)
    return replace(out, model=model, stored_key=stored_key)


def charts(call: Call, out: Outcome) -> Outcome:
    """Figures of a tool that is not stored go to the answer; the model sees their ids."""
    if call.spec.stored:
        return out
    model, pairs = intercept_charts(out.model, out.figures, call.turn.add_chart)
    return replace(out, model=model, charts=pairs)


def compaction(call: Call, out: Outcome) -> Outcome:
    return replace(out, model=compact(out.model, call.ctx.settings.copilot.timezone))


def report_clamps(call: Call, out: Outcome) -> Outcome:
    """The model learns which value was used instead of its out-of-range integer."""
    if not call.clamped:
        return out
    return replace(out, model={**out.model, "_clamped": call.clamped})


def size_guard(call: Call, out: Outcome) -> Outcome:
    """A result over ``tools.max_result_chars`` is cut (its full version stored when possible)."""
    cap = call.ctx.settings.tools.max_result_chars
    if out.is_error:
        return replace(out, model=guard_size(out.model, cap, lambda: None))

    def store_full() -> str | None:
        if out.stored_key is not None:
            return out.stored_key
        key = call.spec.key_for(call.normalised)  # store_key (calibration_notes) or the tool name
        return key if call.store.put(key, out.result).stored else None

    return replace(out, model=guard_size(out.model, cap, store_full, call.spec.shrink))


STEPS: tuple[Step, ...] = (attachments, data_store, charts, compaction, report_clamps, size_guard)
ERROR_STEPS: tuple[Step, ...] = (size_guard,)


def postprocess(call: Call, raw: Any) -> Outcome:
    """The steps over an implementation's return value (blocking: pool only)."""
    out = Outcome.of(call.spec.name, raw)
    for step in ERROR_STEPS if out.is_error else STEPS:
        out = step(call, out)
    return out
