"""Run catalogue tools on the shared demo lab: ``call(name, project=…, **args)`` validates the
arguments as the executor does and runs its implementation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import pytest

from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.executor import validate_arguments
from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, ToolError, ToolSpec
from qdash.settings import Settings

SPEC_BY_NAME = {spec.name: spec for spec in SPECS}
DEMO, OTHER = "proj-demo", "proj-other"
DEMO_VALUES: dict[str, Any] = {
    "qid": "16",
    "qids": ["1", "2"],
    "task_name": "CheckT1",
    "parameter_name": "t1",
    "metric_name": "t1",
    "code": "print(sorted(data))",
}
"""What the demo lab's tools are asked about, by argument name (``entity_id`` comes from the lab)."""


def sample_arguments(spec: ToolSpec, values: Mapping[str, Any], nulls: bool = False) -> dict[str, Any]:
    """A call of ``spec`` derived from its argument model: each required argument from ``values`` by
    its name, every other one left to its default (``nulls``: sent as ``null``, as a strict-mode model
    sends it).

    Why: the tests that run every tool take the tools from the registry and their calls from here, so
    a new tool needs no entry in their lists; a required argument with no value fails here, by name,
    instead of the tool being skipped.
    """
    fields = spec.args_model.model_fields
    missing = [name for name, field in fields.items() if field.is_required() and name not in values]
    assert not missing, f"{spec.name}: no sample value for the required {missing}; add one to the values"
    return {
        name: values[name] if field.is_required() else None
        for name, field in fields.items()
        if field.is_required() or nulls
    }


def completed_runs(db: Any, parameter: str, project: str = DEMO) -> list[dict[str, Any]]:
    """The completed runs on 64Qv3 that output ``parameter``, newest first, straight from the history."""
    query = {"project_id": project, "chip_id": "64Qv3", "status": "completed"}
    query["output_parameter_names"] = parameter
    return list(db.task_result_history.find(query).sort("start_at", -1))


class Call(Protocol):
    def __call__(self, name: str, project: str = DEMO, **args: Any) -> dict[str, Any]: ...


def run_tool_result(ctx: ToolContext, name: str, args: dict[str, Any]) -> ToolResult:
    """Validate like the executor, then execute: the data with the charts and blocks beside it."""
    spec = SPEC_BY_NAME[name]
    validated = validate_arguments(name, spec.args_model, args)
    assert isinstance(validated, tuple), validated
    result = spec(ctx, validated[0])
    return result if isinstance(result, ToolResult) else ToolResult(result)


def run_tool(ctx: ToolContext, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The data of :func:`run_tool_result` (what the model's view is made from)."""
    return run_tool_result(ctx, name, args).data


@pytest.fixture
def make_ctx(demo_lab: Any, settings: Settings) -> Callable[[str], ToolContext]:
    def build(project: str) -> ToolContext:
        return ToolContext(db=demo_lab.db, project_id=project, username="alice", settings=settings)

    return build


@pytest.fixture
def call(make_ctx: Callable[[str], ToolContext]) -> Call:
    def invoke(name: str, project: str = DEMO, **args: Any) -> dict[str, Any]:
        return run_tool(make_ctx(project), name, args)

    return invoke


@pytest.fixture
def call_result(make_ctx: Callable[[str], ToolContext]) -> Callable[..., ToolResult]:
    """Like ``call``, with the figures and blocks the tool hands the user (``ToolResult``)."""

    def invoke(name: str, project: str = DEMO, **args: Any) -> ToolResult:
        return run_tool_result(make_ctx(project), name, args)

    return invoke


@pytest.fixture
def error(call: Call) -> Callable[..., str]:
    """The ``ToolError`` message a call raises (fails the test when it succeeds)."""

    def invoke(name: str, project: str = DEMO, **args: Any) -> str:
        with pytest.raises(ToolError) as caught:
            call(name, project, **args)
        return caught.value.message

    return invoke
