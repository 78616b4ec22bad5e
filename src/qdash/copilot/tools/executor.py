"""One tool as the engine sees it: validate, guard, run off the event loop, post-process, serialise.

Why here and not in the engine: the engine knows tools only by the small ``Tool`` protocol; what a
calibration tool needs around its query (argument normalisation, the per-turn rate limit and
breaker on *normalised* arguments, the data store, chart interception, compaction, the size guard)
is tool business. Order (docs/tools.md): validate → breaker → rate limit → execute (thread pool,
timeout) → data store or chart interception → compaction → size guard → JSON. Synchronous
implementations and all post-processing (which may write to MongoDB) run on one bounded
process-wide thread pool; nothing blocking ever runs on the event loop. Every failure becomes
``{"error": …, "hint": …}``; a traceback only ever reaches the server log.
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, ValidationError
from pymongo.errors import ExecutionTimeout, PyMongoError

from qdash.copilot.tools.jsonsafe import dumps, json_safe
from qdash.copilot.tools.spec import AsyncToolImpl, ToolContext, ToolError, ToolImpl, ToolSpec
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.attachments import take_answer, take_attachments
from qdash.copilot.tools.wrappers.breaker import check_breaker
from qdash.copilot.tools.wrappers.charts import intercept_charts
from qdash.copilot.tools.wrappers.compaction import compact
from qdash.copilot.tools.wrappers.data_store import DataStore, summarise
from qdash.copilot.tools.wrappers.rate_limit import check_rate_limit
from qdash.copilot.tools.wrappers.size_guard import guard_size
from qdash.engine.function_tool import describe_validation_error
from qdash.engine.pool import run_blocking
from qdash.engine.strict_schema import without_null_defaults
from qdash.engine.tool import ToolOutput
from qdash.logging import get_logger

log = get_logger(__name__)

BREAKER_REASON = "Detected repeated identical tool calls"
VALIDATION_HINT = "Fix the named argument(s) to match the tool's parameter schema (types, bounds, required)."
FAILURE_HINT = (
    "This is a server-side problem, not your arguments; answer with what you have or try another tool."
)
_BOUNDS = {"less_than_equal": "le", "greater_than_equal": "ge", "less_than": "lt", "greater_than": "gt"}


@dataclass(frozen=True)
class Processed:
    """A post-processed result: the model's JSON text, intercepted charts, attached blocks."""

    text: str
    charts: list[tuple[str, dict[str, Any]]]
    is_error: bool
    attachments: list[dict[str, Any]] = field(default_factory=list)
    answer: list[dict[str, Any]] | None = None


def error_payload(message: str, hint: str | None = None) -> dict[str, Any]:
    return {"error": message, "hint": hint} if hint else {"error": message}


class ToolExecutor:
    """Satisfies the engine's ``Tool`` protocol for one declared tool and one caller."""

    def __init__(
        self,
        *,
        spec: ToolSpec,
        parameters: dict[str, Any],
        ctx: ToolContext,
        turn: TurnState,
        store: DataStore,
    ) -> None:
        self.spec = spec
        self._parameters = parameters
        self.ctx = ctx
        self.turn = turn
        self.store = store
        tools = ctx.settings.tools
        self.timeout_s = spec.timeout_s or tools.timeout_s
        self.is_async = inspect.iscoroutinefunction(spec.impl)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    @property
    def label(self) -> str:
        return self.spec.label

    async def __call__(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            return await self._call(arguments)
        except Exception as exc:  # the last line of defence: a wrapper bug must not end the turn
            log.exception("tool_wrapper_failed", tool=self.name)
            return self._error(error_payload(f"{type(exc).__name__}: {exc}", FAILURE_HINT))

    async def _call(self, arguments: dict[str, Any]) -> ToolOutput:
        validated = self.validate(arguments)
        if isinstance(validated, dict):
            return self._error(validated)
        args, clamped = validated
        normalised = args.model_dump(mode="json")
        tools = self.ctx.settings.tools
        refusal = check_breaker(self.turn, self.name, normalised, tools.max_identical_calls)
        if refusal is not None:
            return self._error(refusal, stop_reason=BREAKER_REASON)
        if self.spec.rate_limited:
            refusal = check_rate_limit(self.turn, self.name, tools.timeseries_call_limit)
            if refusal is not None:
                return self._error(refusal)
        try:
            if self.is_async:
                impl = cast(AsyncToolImpl, self.spec.impl)
                async with asyncio.timeout(self.timeout_s):
                    raw = await self._guarded_async(impl, args)
                done = await run_blocking(self.postprocess, raw, normalised, clamped)
            else:
                async with asyncio.timeout(self.timeout_s):
                    done = await run_blocking(self._run_sync, args, normalised, clamped)
        except TimeoutError:
            return self._error(
                error_payload(
                    f"Tool {self.name} timed out after {self.timeout_s:g} s",
                    "Narrow the request (fewer qids, smaller last_n) or try later.",
                )
            )
        return ToolOutput(
            done.text,
            charts=[figure for _, figure in done.charts],
            chart_ids=[chart_id for chart_id, _ in done.charts],
            is_error=done.is_error,
            attachments=done.attachments,
            answer=done.answer,
        )

    def validate(self, arguments: Any) -> tuple[BaseModel, dict[str, Any]] | dict[str, Any]:
        """The args model, or an error payload naming the bad fields.

        ``null`` for a field with a default means "use the default" (strict schemas make every field
        nullable). Out-of-range integers from non-strict providers are clamped to the bound and
        reported in ``_clamped``.
        """
        if not isinstance(arguments, dict):
            return error_payload(
                f"Invalid arguments for {self.name}: expected a JSON object", VALIDATION_HINT
            )
        args = without_null_defaults(self.spec.args_model, arguments)
        clamped: dict[str, Any] = {}
        for _ in range(2):
            try:
                return self.spec.args_model.model_validate(args), clamped
            except ValidationError as exc:
                fixes = _clamps(exc)
                if not fixes or set(fixes) & set(clamped):
                    return error_payload(describe_validation_error(self.name, exc), VALIDATION_HINT)
                args.update(fixes)
                clamped.update(fixes)
        return error_payload(f"Invalid arguments for {self.name}", VALIDATION_HINT)

    async def _guarded_async(self, impl: AsyncToolImpl, args: BaseModel) -> Any:
        try:
            return await impl(self.ctx, args)
        except ToolError as exc:
            return error_payload(exc.message, exc.hint)
        except Exception as exc:
            log.exception("tool_failed", tool=self.name)
            return error_payload(f"{type(exc).__name__}: {exc}", FAILURE_HINT)

    def _run_sync(self, args: BaseModel, normalised: dict[str, Any], clamped: dict[str, Any]) -> Processed:
        """On a pool thread: the implementation, then the post-processing."""
        impl = cast(ToolImpl, self.spec.impl)
        raw: Any
        try:
            raw = impl(self.ctx, args)
        except ToolError as exc:
            raw = error_payload(exc.message, exc.hint)
        except ExecutionTimeout:
            raw = error_payload(
                f"Tool {self.name} timed out after {self.timeout_s:g} s",
                "Narrow the request (fewer qids, smaller last_n).",
            )
        except PyMongoError as exc:
            log.exception("tool_db_failed", tool=self.name)
            raw = error_payload(f"Database error: {type(exc).__name__}", FAILURE_HINT)
        except Exception as exc:
            log.exception("tool_failed", tool=self.name)
            raw = error_payload(f"{type(exc).__name__}: {exc}", FAILURE_HINT)
        return self.postprocess(raw, normalised, clamped)

    def postprocess(self, raw: Any, normalised: dict[str, Any], clamped: dict[str, Any]) -> Processed:
        """Attachments out → data store or chart interception → compaction → size guard → JSON
        (blocking: pool only)."""
        if not isinstance(raw, dict):
            raw = error_payload(
                f"Tool {self.name} returned {type(raw).__name__}, not an object", FAILURE_HINT
            )
        result: dict[str, Any] = json_safe(raw)
        if result.get("error") is not None:  # sandbox results carry "error": null on success
            text = dumps(guard_size(result, self.ctx.settings.tools.max_result_chars, lambda: None))
            return Processed(text, [], True)
        result, attachments = take_attachments(result)
        result, answer = take_answer(result)
        charts: list[tuple[str, dict[str, Any]]] = []
        stored_key: str | None = None
        if self.spec.stored:
            stored_key = self.spec.key_for(normalised)
            put = self.store.put(stored_key, result)
            note = None if put.stored else f"Full data was not stored ({put.reason}); ask for less data."
            model = summarise(result, stored_key if put.stored else None, self.store.keys(), note)
            stored_key = stored_key if put.stored else None
        else:
            model, charts = intercept_charts(result, self.turn)
        model = compact(model, self.ctx.settings.copilot.timezone)
        if clamped:
            model["_clamped"] = clamped

        def store_full() -> str | None:
            if stored_key is not None:
                return stored_key
            key = self.spec.key_for(normalised)  # store_key (calibration_notes) or the tool name
            return key if self.store.put(key, result).stored else None

        model = guard_size(model, self.ctx.settings.tools.max_result_chars, store_full, self.spec.shrink)
        return Processed(dumps(model), charts, False, attachments, answer)

    def _error(self, payload: dict[str, Any], stop_reason: str | None = None) -> ToolOutput:
        return ToolOutput(dumps(payload), is_error=True, stop_reason=stop_reason)


def _clamps(exc: ValidationError) -> dict[str, Any]:
    """Top-level integer bound violations → the bound (``lt``/``gt`` step one inside)."""
    fixes: dict[str, Any] = {}
    for err in exc.errors():
        bound = _BOUNDS.get(err["type"])
        if bound is None or len(err["loc"]) != 1 or not isinstance(err.get("input"), int):
            return {}
        limit = (err.get("ctx") or {}).get(bound)
        if not isinstance(limit, int):
            return {}
        fixes[str(err["loc"][0])] = limit + {"le": 0, "ge": 0, "lt": -1, "gt": 1}[bound]
    return fixes
