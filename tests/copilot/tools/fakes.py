"""Small tools that exercise the framework without the catalogue's queries."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, ToolError, ToolSpec


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    qid: str = Field(description="Qubit id.", max_length=64)
    last_n: int = Field(5, ge=1, le=50, description="Rows.")


class ParamArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    parameter_name: str = Field(description="Parameter.")
    qid: str | None = Field(None, description="Qubit id.")


class CodeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="Python code.", max_length=20_000)


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def echo(ctx: ToolContext, args: EchoArgs) -> dict[str, Any]:
    """Returns its (validated) arguments and where it ran, with full-precision floats."""
    return {"project_id": ctx.project_id, "qid": args.qid, "last_n": args.last_n, "value": 45.23456789012}


def timeseries(ctx: ToolContext, args: ParamArgs) -> dict[str, Any]:
    return {"parameter_name": args.parameter_name, "qid": args.qid, "rows": [[1, 2.0]]}


def chip_series(ctx: ToolContext, args: ParamArgs) -> dict[str, Any]:
    """A stored-tool result: statistics plus per-qubit rows and a long timeseries."""
    qubits = [{"qid": str(q), "latest": 40.0 + q, "trend": "up"} for q in range(64)]
    series = [
        {"qid": str(q), "t": f"2026-11-{1 + i:02d}T10:00:00+00:00", "v": 40.0 + q + i / 7}
        for q in range(64)
        for i in range(20)
    ]
    return {
        "parameter_name": args.parameter_name,
        "statistics": {"count": len(series), "mean": 71.5, "nan_check": math.nan},
        "qubits": qubits,
        "timeseries": series,
    }


def heatmap(ctx: ToolContext, args: NoArgs) -> ToolResult:
    figure = {"data": [{"type": "heatmap", "z": [[1.0, math.nan], [3.0, 4.0]]}], "layout": {"title": "T1"}}
    return ToolResult({"status": "success", "message": "Heatmap chart generated."}, charts=[figure])


def big(ctx: ToolContext, args: EchoArgs) -> dict[str, Any]:
    rows = [{"qid": str(i), "value": i * 1.2345678, "note": "x" * 40} for i in range(args.last_n * 100)]
    return {"qid": args.qid, "items": rows, "statistics": {"count": len(rows)}}


def slow(ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
    time.sleep(1.0)
    return {"ok": True}


def broken(ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
    raise RuntimeError("boom")


def refusing(ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
    raise ToolError("No results found (qid=99)", "list the qubits first")


async def sandbox_like(ctx: ToolContext, args: CodeArgs) -> ToolResult:
    await asyncio.sleep(0)
    keys = sorted(ctx.store.snapshot()) if ctx.store is not None else []
    reply = {"output": f"keys={keys}", "error": None, "chart": None}
    return ToolResult(reply, charts=[{"data": [{"y": [1, 2]}]}, {"nodata": 1}])


SPECS = [
    ToolSpec("echo", "Echo a qubit. Returns qid, last_n.", EchoArgs, "Echoing", echo),
    ToolSpec(
        "get_parameter_timeseries", "One parameter.", ParamArgs, "Fetching", timeseries, rate_limited=True
    ),
    ToolSpec(
        "get_chip_parameter_timeseries",
        "All qubits.",
        ParamArgs,
        "Fetching",
        chip_series,
        stored=True,
        store_key="{parameter_name}",
    ),
    ToolSpec("generate_chip_heatmap", "Heatmap.", NoArgs, "Generating chip heatmap", heatmap),
    ToolSpec("big", "Large result.", EchoArgs, "Big", big),
    ToolSpec("slow", "Sleeps 1 s.", NoArgs, "Slow", slow),
    ToolSpec("broken", "Raises.", NoArgs, "Broken", broken),
    ToolSpec("refusing", "Raises ToolError.", NoArgs, "Refusing", refusing),
    ToolSpec("execute_python_analysis", "Run code.", CodeArgs, "Executing Python analysis", sandbox_like),
]
