"""The registry: the ordered tools with their strict parameter schemas.

Specs (what the model sees) can be listed, validated and serialised to JSON without touching a
database — the CLI, docs and schema tests do exactly that. The executors the engine calls are
made from it once, on first use, and serve every turn (the turn comes with each call).
Construction normalises every args model to a strict schema and fails on the first bad one, so a
broken tool stops start-up instead of drawing a 400 from the provider.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from qdash.copilot.tools.custom import build_custom_tool
from qdash.copilot.tools.schema import Shape, strict_parameters, tool_definition
from qdash.copilot.tools.spec import ToolSpec
from qdash.settings import Settings

if TYPE_CHECKING:
    from qdash.copilot.tools.executor import ToolExecutor

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class RegistryError(ValueError):
    """Duplicate or invalid tool names, non-strict schemas."""


class ToolRegistry:
    """An ordered set of specs with their strict parameter schemas."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self._parameters: dict[str, dict[str, Any]] = {}
        self._executors: list[ToolExecutor] | None = None
        for spec in specs:
            if not NAME.match(spec.name):
                raise RegistryError(f"tool name {spec.name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
            if spec.name in self._specs:
                raise RegistryError(f"tool {spec.name!r} is declared twice")
            self._specs[spec.name] = spec
            self._parameters[spec.name] = strict_parameters(spec.args_model, spec.name)

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def spec(self, name: str) -> ToolSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise RegistryError(f"unknown tool {name!r}; known: {', '.join(self._specs)}") from None

    def parameters(self, name: str) -> dict[str, Any]:
        """The strict-mode JSON Schema of ``name``'s arguments."""
        self.spec(name)
        return self._parameters[name]

    def tools(self, *, chat: bool = False) -> list[ToolExecutor]:
        """The executors the engine calls, in order; tools tagged ``chat`` (``ask_user``) only for a
        chat turn. Made once per registry: the driver and the pipeline load on first use, not for
        ``qdash tools list``."""
        from qdash.copilot.tools.ask_user import CHAT
        from qdash.copilot.tools.executor import ToolExecutor

        if self._executors is None:
            self._executors = [ToolExecutor(spec, self._parameters[spec.name]) for spec in self]
        return [tool for tool in self._executors if chat or CHAT not in tool.spec.tags]

    def definition(self, name: str, shape: Shape = "responses") -> dict[str, Any]:
        spec = self.spec(name)
        return tool_definition(spec.name, spec.description, self._parameters[name], shape)

    def definitions(self, shape: Shape = "responses") -> list[dict[str, Any]]:
        """Every tool as sent to the provider (Responses: flat; Chat Completions: nested)."""
        return [self.definition(name, shape) for name in self._specs]

    def to_json(self, shape: Shape = "responses") -> str:
        return json.dumps(self.definitions(shape), ensure_ascii=False, indent=2)


def custom_tools(settings: Settings) -> list[ToolSpec]:
    """The tools declared under ``tools.custom`` (ConfigError if bad)."""
    return [build_custom_tool(name, config) for name, config in settings.tools.custom.items()]


def default_specs(settings: Settings) -> list[ToolSpec]:
    """The catalogue's eighteen specs, the investigation tools when ``tools.investigation`` is on,
    the config-declared tools, then ``ask_user`` (chat turns only; last, so the prefix the prompt
    cache sees stays the same), then the write tools when ``actions.enabled``."""
    from qdash.copilot.tools.actions import WRITE_TOOLS, offered_write_tools
    from qdash.copilot.tools.ask_user import ask_user
    from qdash.copilot.tools.catalog import INVESTIGATION, SPECS

    custom = custom_tools(settings)
    clash = sorted({s.name for s in [*SPECS, ask_user, *WRITE_TOOLS]} & {s.name for s in custom})
    if clash:
        raise RegistryError(f"tools.custom.{clash[0]}: the name is taken by a built-in tool")
    offered = [s for s in SPECS if settings.tools.investigation or INVESTIGATION not in s.tags]
    return [*offered, *custom, ask_user, *offered_write_tools(settings)]


_REGISTRIES: dict[str, ToolRegistry] = {}


def default_registry(settings: Settings) -> ToolRegistry:
    """The default registry, built once per custom-tool, investigation and actions setting, then shared.

    Why shared: building it normalises (deep-copies) every tool's schema, ~1 ms of event-loop CPU
    that every chat turn and direct tool call paid; specs and schemas never change after start-up.
    """
    tools = settings.tools.model_dump(mode="json")
    actions = settings.actions.model_dump(mode="json", exclude={"approval_ttl_s"})
    key = json.dumps([tools["custom"], tools["investigation"], actions], sort_keys=True)
    registry = _REGISTRIES.get(key)
    if registry is None:
        registry = _REGISTRIES.setdefault(key, ToolRegistry(default_specs(settings)))
    return registry
