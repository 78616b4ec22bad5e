"""Tools from plain typed Python functions or pydantic argument models.

Why: a custom agent should need nothing but a function with type hints and a docstring. The schema
comes from the signature (via a generated pydantic model) and is normalised for strict mode once, at
construction; arguments are validated in lax mode (``"16"`` → ``16``: local models do not always
follow the schema) and a ``null`` for an optional parameter means "use the default". A function
whose first parameter is annotated :class:`RunContext` gets the turn's context there (as
pydantic-ai's tools do); that parameter is not part of the schema.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast, get_origin, get_type_hints

from pydantic import BaseModel, ValidationError, create_model

from qdash.engine.pool import run_blocking
from qdash.engine.strict_schema import strict_schema_for_model, without_null_defaults
from qdash.engine.tool import RunContext, ToolOutput


def first_paragraph(doc: str | None) -> str:
    """A tool's description: the docstring's first paragraph, its lines joined by spaces."""
    text = inspect.cleandoc(doc or "")
    return text.split("\n\n")[0].replace("\n", " ").strip()


def _param_docs(doc: str | None) -> dict[str, str]:
    """``name: text`` lines under an ``Args:`` section (Google style)."""
    docs: dict[str, str] = {}
    in_args = False
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        if stripped.lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args and stripped.endswith(":") and " " not in stripped:
            break
        if in_args and ":" in stripped:
            name, _, text = stripped.partition(":")
            docs[name.split("(")[0].strip()] = text.strip()
    return docs


def takes_context(func: Callable[..., Any]) -> bool:
    """Whether ``func``'s first parameter is annotated ``RunContext`` (or ``RunContext[...]``); a
    callable object (not a function) never takes one."""
    params = list(inspect.signature(func).parameters)
    if not params or not inspect.isroutine(func):
        return False
    hint = get_type_hints(func).get(params[0])
    return hint is RunContext or get_origin(hint) is RunContext


def args_model_from_function(func: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of ``func``'s parameters (descriptions from the docstring's Args section),
    the leading ``RunContext`` parameter left out."""
    from pydantic import Field

    hints = get_type_hints(func)
    docs = _param_docs(func.__doc__)
    fields: dict[str, Any] = {}
    params = list(inspect.signature(func).parameters.items())
    for name, param in params[1:] if takes_context(func) else params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"{func.__name__}: *args/**kwargs cannot be described to a model")
        annotation = hints.get(name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, Field(default, description=docs.get(name)))
    return create_model(f"{func.__name__}_args", **fields)


def describe_validation_error(name: str, exc: ValidationError) -> str:
    """``Invalid arguments for <tool>: <field>: <message>; …``: the text every tool validator returns
    to the model, which names the fields to fix."""
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{field}: {err['msg'].removeprefix('Value error, ')}")
    return f"Invalid arguments for {name}: " + "; ".join(parts)


class FunctionTool:
    """A :class:`~qdash.engine.tool.Tool` around a sync or async callable.

    The callable gets the turn's :class:`RunContext` first when its first parameter is annotated
    so, then the validated arguments as keyword arguments (``takes_model=False``) or the
    validated model instance (``takes_model=True``). It returns anything JSON-serialisable (or a
    :class:`ToolOutput`); exceptions are the loop's business (they become ``{"error": …}``).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        label: str | None = None,
        args_model: type[BaseModel] | None = None,
        ends_turn: bool = False,
        parameters: dict[str, Any] | None = None,
    ) -> None:
        self._func = func
        self._ends_turn = ends_turn
        self._takes_model = args_model is not None
        self._takes_ctx = takes_context(func)
        self._model = args_model or args_model_from_function(func)
        self._name = name or func.__name__
        self._description = description or first_paragraph(func.__doc__) or self._name
        self._label = label or self._name.replace("_", " ").capitalize()
        self._parameters = parameters if parameters is not None else strict_schema_for_model(self._model)

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    @property
    def label(self) -> str:
        return self._label

    @property
    def ends_turn(self) -> bool:
        return self._ends_turn

    def validate(self, arguments: dict[str, Any]) -> BaseModel:
        """Lax validation; ``null`` for a parameter with a default means the default."""
        return self._model.model_validate(without_null_defaults(self._model, arguments))

    async def __call__(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> ToolOutput:
        try:
            validated = self.validate(arguments)
        except ValidationError as exc:
            message = describe_validation_error(self._name, exc)
            return ToolOutput(json.dumps({"error": message}), is_error=True)
        if self._takes_model:
            call_args: tuple[Any, ...] = (validated,)
            call_kwargs: dict[str, Any] = {}
        else:
            call_args = ()
            call_kwargs = {key: getattr(validated, key) for key in self._model.model_fields}
        if self._takes_ctx:
            call_args = (ctx, *call_args)
        if inspect.iscoroutinefunction(self._func):
            result = await cast(Callable[..., Awaitable[Any]], self._func)(*call_args, **call_kwargs)
        else:
            result = await run_blocking(self._func, *call_args, **call_kwargs)
        if isinstance(result, ToolOutput):
            return result
        return ToolOutput(
            result if isinstance(result, str) else json.dumps(result, default=str, ensure_ascii=False)
        )


def function_tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
) -> Any:
    """Decorator (bare or with options) turning a function into a :class:`FunctionTool`."""

    def wrap(target: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(target, name=name, description=description, label=label)

    return wrap(func) if func is not None else wrap
