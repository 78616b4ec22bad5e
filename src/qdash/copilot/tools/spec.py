"""Declarative tool specs, apart from their implementations.

A spec says what the model sees (name, description, argument model) and how the wrappers treat the
tool (status label, whether its result goes to the data store, whether it is rate limited). It
imports no implementation, so specs can be listed, serialised and validated on their own, and the
registry can bind one spec to another implementation (A/B runs, tests).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel
from pymongo.database import Database

from qdash.settings import Settings


class SessionData(Protocol):
    """Read access to the session's data store (what ``data["<key>"]`` holds in the sandbox)."""

    def keys(self) -> list[str]: ...

    def get(self, key: str) -> Any | None: ...

    def snapshot(self) -> dict[str, Any]:
        """Every stored value by key: a private copy, so callers cannot change the store."""
        ...


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

    @property
    def max_time_ms(self) -> int:
        """Server-side budget for one query (``maxTimeMS``), the same as the tool's timeout."""
        return max(1, int(self.settings.tools.timeout_s * 1000))


@dataclass(frozen=True)
class ToolSpec:
    """What the model sees of one tool, and how the wrappers treat it.

    ``stored`` tools put their full result in the data store and the model sees a summary; the key
    is ``store_key`` formatted with the validated arguments (``"{parameter_name}"`` → ``"t1"``,
    ``"chip_summary"``), the tool name when unset. ``timeout_s`` overrides ``tools.timeout_s`` (the
    sandbox tool has its own wall limit).
    """

    name: str
    description: str
    args_model: type[BaseModel]
    label: str
    stored: bool = False
    rate_limited: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)
    store_key: str | None = None
    timeout_s: float | None = None
    shrink: Callable[[dict[str, Any], int, str | None], dict[str, Any] | None] | None = None
    """The tool's own first step of the size guard (``wrappers.size_guard.Shrink``)."""

    def key_for(self, args: Mapping[str, Any]) -> str:
        """The data-store key of a result produced with these (validated) arguments."""
        if self.store_key is None:
            return self.name
        return self.store_key.format_map({k: "" if v is None else v for k, v in args.items()})


ToolImpl = Callable[[ToolContext, Any], dict[str, Any]]
"""A synchronous implementation: ``impl(ctx, validated_args) -> JSON-ready dict``.

It runs off the event loop on the tool pool; it raises ``ToolError`` for problems the model can
fix (the message goes back as ``{"error": …}``) and may raise anything else (logged, then
reported to the model as a generic failure with a hint). Pass ``ctx.max_time_ms`` as ``maxTimeMS``
to queries that can take long.
"""

AsyncToolImpl = Callable[[ToolContext, Any], Awaitable[dict[str, Any]]]
"""An implementation that is itself asynchronous (the sandbox client); it runs on the event loop."""


class ToolError(Exception):
    """A problem the model can act on; ``hint`` tells it what to try instead."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
