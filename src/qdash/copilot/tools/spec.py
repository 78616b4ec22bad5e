"""Declarative tool specs, apart from their implementations.

A spec says what the model sees (name, description, argument model) and how the wrappers treat the
tool (status label, whether its result goes to the data store, whether it is rate limited). It
imports no implementation, so specs can be listed, serialised and validated on their own, and the
registry can bind one spec to another implementation (A/B runs, tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pymongo.database import Database

from qdash.settings import Settings


@dataclass(frozen=True)
class ToolContext:
    """Who is asking and where: the project never comes from the model's arguments."""

    db: Database[dict[str, Any]]
    project_id: str
    username: str
    settings: Settings
    session_id: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """What the model sees of one tool, and how the wrappers treat it."""

    name: str
    description: str
    args_model: type[BaseModel]
    label: str
    stored: bool = False
    rate_limited: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)


ToolImpl = Callable[[ToolContext, Any], dict[str, Any]]
"""A synchronous implementation: ``impl(ctx, validated_args) -> JSON-ready dict``.

It runs off the event loop on the tool pool; it raises ``ToolError`` for problems the model can
fix (the message goes back as ``{"error": …}``) and may raise anything else (logged, then
reported to the model as a generic failure with a hint).
"""


class ToolError(Exception):
    """A problem the model can act on; ``hint`` tells it what to try instead."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
