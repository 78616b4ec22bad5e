"""One tool as the engine sees it: validate, then the pipeline's guards, execution and steps.

Why here and not in the engine: the engine knows tools only by the small ``Tool`` protocol; what a
calibration tool needs around its query is tool business, listed in order in ``pipeline.py``
(guards: breaker → rate limit; steps: attachments → answer → data store → charts → compaction →
clamps → size guard). Here: validation (which makes the pipeline's ``Call``) and execution on the
thread pool. An executor is made once per tool and registry and serves every turn: the turn comes
with the call (``RunContext``, its ``deps`` the copilot's ``TurnState``). The timeout and the
consecutive-failure limit are the engine's (``qdash.engine.execution.ToolRunner``), one policy for
every tool. Synchronous implementations and all post-processing (which may write to MongoDB) run on
one bounded process-wide thread pool; nothing blocking ever runs on the event loop. Every failure
becomes ``{"error": …, "hint": …}``; a traceback only ever reaches the server log.
"""

from __future__ import annotations

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
from qdash.copilot.tools.spec import AsyncToolImpl, ToolError, ToolImpl, ToolSpec
from qdash.copilot.tools.turn import TurnState
from qdash.engine.function_tool import FunctionTool, describe_validation_error
from qdash.engine.pool import run_blocking
from qdash.engine.strict_schema import without_null_defaults
from qdash.engine.tool import RunContext, ToolOutput
from qdash.logging import get_logger

log = get_logger(__name__)

VALIDATION_HINT = "Fix the named argument(s) to match the tool's parameter schema (types, bounds, required)."
_BOUNDS = {"less_than_equal": "le", "greater_than_equal": "ge", "less_than": "lt", "greater_than": "gt"}


class ToolExecutor(FunctionTool):
    """One declared tool for every caller and turn: the engine's function tool (name, description,
    schema, label, whether it ends the turn — all from the ``@tool`` declaration), run through the
    copilot's validation and pipeline instead of a plain call."""

    def __init__(self, spec: ToolSpec, parameters: dict[str, Any]) -> None:
        super().__init__(
            spec.impl,
            name=spec.name,
            description=spec.description,
            label=spec.label,
            args_model=spec.args_model,
            ends_turn=spec.ends_turn,
            parameters=parameters,
        )
        self.spec = spec
        self.is_async = inspect.iscoroutinefunction(spec.impl)

    async def __call__(self, run: RunContext[TurnState], arguments: dict[str, Any], /) -> ToolOutput:
        try:
            validated = validate_arguments(self.name, self.spec.args_model, arguments)
            if isinstance(validated, dict):
                return refused(validated)
            args, clamped = validated
            normalised = args.model_dump(mode="json")
            call = Call(self.spec, run, args, normalised, clamped)
            return await through(GUARDS, call, self._execute)
        except Exception as exc:  # the last line of defence: a wrapper bug must not end the turn
            log.exception("tool_wrapper_failed", tool=self.name)
            return refused(error_payload(f"{type(exc).__name__}: {exc}", FAILURE_HINT))

    async def _execute(self, call: Call) -> ToolOutput:
        """The implementation and the pipeline's steps (the engine's timeout is around them)."""
        if self.is_async:
            raw = await self._guarded_async(cast(AsyncToolImpl, self.spec.impl), call)
            done = await run_blocking(postprocess, call, raw)
        else:
            done = await run_blocking(self._run_sync, call)
        data = ToolData(
            shown=done.model,
            charts=[figure for _, figure in done.charts],
            chart_ids=[chart_id for chart_id, _ in done.charts],
            attachments=done.attachments,
            answer=done.answer,
        )
        return ToolOutput(dumps(done.model), is_error=done.is_error, ends_turn=bool(done.answer), data=data)

    async def _guarded_async(self, impl: AsyncToolImpl, call: Call) -> Any:
        try:
            return await impl(call.ctx, call.args)
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
            raw = impl(call.ctx, call.args)
        except ToolError as exc:
            raw = error_payload(exc.message, exc.hint)
        except ExecutionTimeout:
            raw = error_payload(
                f"Tool {self.name} timed out after {call.ctx.settings.tools.timeout_s:g} s",
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
    name: str, model: type[BaseModel], arguments: dict[str, Any]
) -> tuple[BaseModel, dict[str, Any]] | dict[str, Any]:
    """The validated arguments and the integers clamped, or an error payload naming the bad fields.

    The one validation step of every copilot tool (the catalogue's, the actions', config-declared
    ones): ``null`` for a field with a default means "use the default" (strict schemas make every
    field nullable), and out-of-range integers are clamped to the bound, here and only here; the
    pipeline reports them as ``_clamped``.
    """
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
