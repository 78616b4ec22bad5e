"""One tool as the engine sees it: validate, then the pipeline's guards, execution and steps.

Why here and not in the engine: the engine knows tools only by the small ``Tool`` protocol; what a
calibration tool needs around its query is tool business, listed in order in ``pipeline.py``
(guards: breaker → rate limit; steps: attachments → answer → data store → charts → compaction →
clamps → size guard). Here: validation (which makes the pipeline's ``Call``) and execution (thread
pool, timeout). Synchronous implementations and all post-processing (which may write to MongoDB)
run on one bounded process-wide thread pool; nothing blocking ever runs on the event loop. Every
failure becomes ``{"error": …, "hint": …}``; a traceback only ever reaches the server log.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, cast

from pydantic import BaseModel, ValidationError
from pymongo.errors import ExecutionTimeout, PyMongoError

from qdash.copilot.tools.jsonsafe import dumps
from qdash.copilot.tools.output import ToolData
from qdash.copilot.tools.pipeline import (
    FAILURE_HINT,
    GUARDS,
    Call,
    Outcome,
    error_payload,
    postprocess,
    refused,
    through,
)
from qdash.copilot.tools.spec import AsyncToolImpl, ToolContext, ToolError, ToolImpl, ToolSpec
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.data_store import DataStore
from qdash.engine.function_tool import describe_validation_error
from qdash.engine.pool import run_blocking
from qdash.engine.strict_schema import without_null_defaults
from qdash.engine.tool import ToolOutput
from qdash.logging import get_logger

log = get_logger(__name__)

VALIDATION_HINT = "Fix the named argument(s) to match the tool's parameter schema (types, bounds, required)."
_BOUNDS = {"less_than_equal": "le", "greater_than_equal": "ge", "less_than": "lt", "greater_than": "gt"}


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

    @property
    def ends_turn(self) -> bool:
        return self.spec.ends_turn

    async def __call__(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            validated = validate_arguments(self.name, self.spec.args_model, arguments)
            if isinstance(validated, dict):
                return refused(validated)
            args, clamped = validated
            normalised = args.model_dump(mode="json")
            call = Call(self.spec, self.ctx, self.turn, self.store, args, normalised, clamped)
            return await through(GUARDS, call, self._execute)
        except Exception as exc:  # the last line of defence: a wrapper bug must not end the turn
            log.exception("tool_wrapper_failed", tool=self.name)
            return refused(error_payload(f"{type(exc).__name__}: {exc}", FAILURE_HINT))

    async def _execute(self, call: Call) -> ToolOutput:
        """The implementation and the pipeline's steps, within the tool's timeout."""
        try:
            if self.is_async:
                impl = cast(AsyncToolImpl, self.spec.impl)
                async with asyncio.timeout(self.timeout_s):
                    raw = await self._guarded_async(impl, call.args)
                done = await run_blocking(postprocess, call, raw)
            else:
                async with asyncio.timeout(self.timeout_s):
                    done = await run_blocking(self._run_sync, call)
        except TimeoutError:
            return refused(
                error_payload(
                    f"Tool {self.name} timed out after {self.timeout_s:g} s",
                    "Narrow the request (fewer qids, smaller last_n) or try later.",
                )
            )
        data = ToolData(
            charts=[figure for _, figure in done.charts],
            chart_ids=[chart_id for chart_id, _ in done.charts],
            attachments=done.attachments,
            answer=done.answer,
        )
        return ToolOutput(dumps(done.model), is_error=done.is_error, ends_turn=bool(done.answer), data=data)

    async def _guarded_async(self, impl: AsyncToolImpl, args: BaseModel) -> Any:
        try:
            return await impl(self.ctx, args)
        except ToolError as exc:
            return error_payload(exc.message, exc.hint)
        except Exception as exc:
            log.exception("tool_failed", tool=self.name)
            return error_payload(f"{type(exc).__name__}: {exc}", FAILURE_HINT)

    def _run_sync(self, call: Call) -> Outcome:
        """On a pool thread: the implementation, then the pipeline's steps."""
        impl = cast(ToolImpl, self.spec.impl)
        raw: Any
        try:
            raw = impl(self.ctx, call.args)
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
        return postprocess(call, raw)


def validate_arguments(
    name: str, model: type[BaseModel], arguments: Any
) -> tuple[BaseModel, dict[str, Any]] | dict[str, Any]:
    """The validated arguments and the integers clamped, or an error payload naming the bad fields.

    The one validation step of every copilot tool (the catalogue's, the actions', config-declared
    ones): ``null`` for a field with a default means "use the default" (strict schemas make every
    field nullable), and out-of-range integers are clamped to the bound, here and only here; the
    pipeline reports them as ``_clamped``.
    """
    if not isinstance(arguments, dict):
        return error_payload(f"Invalid arguments for {name}: expected a JSON object", VALIDATION_HINT)
    args = without_null_defaults(model, arguments)
    clamped: dict[str, Any] = {}
    for _ in range(2):
        try:
            validated = model.model_validate(args)
        except ValidationError as exc:
            fixes = _clamps(exc)
            if not fixes or set(fixes) & set(clamped):
                return error_payload(describe_validation_error(name, exc), VALIDATION_HINT)
            args.update(fixes)
            clamped.update(fixes)
            continue
        return validated, clamped
    return error_payload(f"Invalid arguments for {name}", VALIDATION_HINT)


def _clamps(exc: ValidationError) -> dict[str, Any]:
    """Top-level integer bound violations → the bound (``lt``/``gt`` step one inside).

    A bound error means the input parsed as a number, also when it came as text (``"500"``) or as a
    whole float (``500.0``); a boolean is not a number to clamp.
    """
    fixes: dict[str, Any] = {}
    for err in exc.errors():
        bound = _BOUNDS.get(err["type"])
        if bound is None or len(err["loc"]) != 1 or isinstance(err.get("input"), bool):
            return {}
        limit = (err.get("ctx") or {}).get(bound)
        if not isinstance(limit, int):
            return {}
        fixes[str(err["loc"][0])] = limit + {"le": 0, "ge": 0, "lt": -1, "gt": 1}[bound]
    return fixes
