"""A tool is declared once: ``@tool(label=…)`` on its implementation makes its :class:`ToolSpec`,
the engine's function tool's fields (name, description, args model, label, ``ends_turn``) plus the
copilot's metadata; the registry runs each as a ``ToolExecutor``, a ``FunctionTool`` with the
copilot's pipeline.

The spec says what the model sees — the name is the function's, the description the first paragraph
of its docstring, the argument model the annotation of its ``args`` parameter — and how the wrappers
treat the tool (status label, data store, rate limit, size guard). The registry lists specs in one
ordered place (``catalog.SPECS``); a test double or an A/B variant is ``replace(spec, impl=…)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack, get_type_hints

from pydantic import BaseModel

from qdash.engine.function_tool import first_paragraph
from qdash.settings import Settings

if TYPE_CHECKING:  # the driver and the wrappers load on a call, not for `qdash tools list`
    from pymongo.database import Database

    from qdash.copilot.tools.wrappers.size_guard import Shrink


class SessionData(Protocol):
    """Read access to the session's data store (what ``data["<key>"]`` holds in the sandbox)."""

    def keys(self) -> list[str]: ...

    def get(self, key: str) -> Any | None: ...

    def snapshot(self) -> dict[str, Any]:
        """Every stored value by key: a private copy, so callers cannot change the store."""
        ...


class SandboxReply(Protocol):
    def to_dict(self) -> dict[str, Any]:
        """``{"output": str|None, "error": str|None, "chart": …}``."""
        ...


class SandboxRunner(Protocol):
    """What we need of ``qdash.sandbox.SandboxPool``: run code over data, never raise for code."""

    async def run(self, code: str, data: dict[str, Any] | None = None) -> SandboxReply: ...


class UploadTables(Protocol):
    """What we need of ``qdash.uploads.UploadStore``: a session's tables as lists of row dicts
    (blocking; called on the tool pool)."""

    def load_rows(
        self, project_id: str, username: str, session_id: str
    ) -> dict[str, list[dict[str, Any]]]: ...


@dataclass(frozen=True)
class ToolContext:
    """Who is asking and where: the project never comes from the model's arguments."""

    db: Database[dict[str, Any]]
    project_id: str
    username: str
    settings: Settings
    session_id: str | None = None
    store: SessionData | None = None
    """The session's data store; read by ``execute_python_analysis``, ``None`` outside a session."""
    sandbox: SandboxRunner | None = None
    """Where ``execute_python_analysis`` runs code; ``None`` where no sandbox runs."""
    uploads: UploadTables | None = None
    """The session's uploaded tables, which ``execute_python_analysis`` also sees as ``data``."""
    model: str | None = None
    """The alias of the turn's model: a write tool's proposal records which model proposed it."""

    def __post_init__(self) -> None:
        if not self.project_id:
            raise ValueError("project_id is required: every tool query is scoped by project")

    @property
    def max_time_ms(self) -> int:
        """Server-side budget for one query (``maxTimeMS``), the same as the tool's timeout."""
        return max(1, int(self.settings.tools.timeout_s * 1000))


ToolImpl = Callable[[ToolContext, Any], dict[str, Any]]
"""A synchronous implementation: ``impl(ctx, validated_args) -> JSON-ready dict``.

It runs off the event loop on the tool pool; it raises ``ToolError`` for problems the model can
fix (the message goes back as ``{"error": …}``) and may raise anything else (logged, then
reported to the model as a generic failure with a hint). Pass ``ctx.max_time_ms`` as ``maxTimeMS``
to queries that can take long.
"""

AsyncToolImpl = Callable[[ToolContext, Any], Awaitable[dict[str, Any]]]
"""An implementation that is itself asynchronous (the sandbox client); it runs on the event loop."""


@dataclass(frozen=True)
class ToolSpec:
    """What the model sees of one tool, and how the wrappers treat it.

    ``stored`` tools put their full result in the data store and the model sees a summary; the key
    is ``store_key`` formatted with the validated arguments (``"{parameter_name}"`` → ``"t1"``,
    ``"chip_summary"``), the tool name when unset. Every tool runs under the one ``tools.timeout_s``
    the engine applies. Calling a spec calls its implementation.
    """

    name: str
    description: str
    args_model: type[BaseModel]
    label: str
    impl: ToolImpl | AsyncToolImpl
    stored: bool = False
    rate_limited: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)
    store_key: str | None = None
    shrink: Shrink | None = None
    """The tool's own first step of the size guard."""
    ends_turn: bool = False
    """Its answer ends the turn (``ask_user``, the write tools): a round runs one such call."""

    def key_for(self, args: Mapping[str, Any]) -> str:
        """The data-store key of a result produced with these (validated) arguments."""
        if self.store_key is None:
            return self.name
        return self.store_key.format_map({k: "" if v is None else v for k, v in args.items()})

    def __call__(self, ctx: ToolContext, args: Any) -> Any:
        return self.impl(ctx, args)


class ToolOptions(TypedDict, total=False):
    """The optional fields of :class:`ToolSpec`, as :func:`tool` takes them (the defaults are the
    spec's)."""

    stored: bool
    rate_limited: bool
    tags: tuple[str, ...]
    store_key: str | None
    shrink: Shrink | None
    ends_turn: bool


def tool(
    *, label: str, **options: Unpack[ToolOptions]
) -> Callable[[Callable[[ToolContext, Any], Any]], ToolSpec]:
    """Declare the decorated ``impl(ctx, args: ArgsModel)`` as a tool (see :class:`ToolSpec`)."""

    def declare(impl: Callable[[ToolContext, Any], Any]) -> ToolSpec:
        args_name = list(inspect.signature(impl).parameters)[1]
        description = first_paragraph(impl.__doc__)
        if not description:
            raise TypeError(f"tool {impl.__name__}: the docstring's first paragraph is its description")
        return ToolSpec(
            name=impl.__name__,
            description=description,
            args_model=get_type_hints(impl)[args_name],
            label=label,
            impl=impl,
            **options,
        )

    return declare


class ToolError(Exception):
    """A problem the model can act on; ``hint`` tells it what to try instead."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
