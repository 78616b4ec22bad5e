"""``execute_python_analysis``: session data + uploads → the sandbox.

The code never runs in this process: the sandbox (``qdash.sandbox``, ``ToolContext.sandbox``) gets
JSON and returns JSON ``{output, error, chart}``; charts are then intercepted by the executor like
any other chart. ``data`` is a private copy: stored tool results by key (``data["t1"]``,
``data["chip_summary"]``) over uploaded tables by name, so code cannot change the store.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from qdash.copilot.tools.catalog.args import Code, ToolArgs
from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, ToolError, tool
from qdash.engine.pool import run_blocking
from qdash.sandbox.policy import imports_for_the_model


class AnalysisArgs(ToolArgs):
    code: Code = Field(
        description=f"Imports: {imports_for_the_model()}. print(), or result = JSON or "
        "{'output','chart': figure}"
    )


def data_for(ctx: ToolContext) -> dict[str, Any]:
    """What the code sees as ``data`` (blocking: reads MongoDB)."""
    data: dict[str, Any] = {}
    if ctx.uploads is not None and ctx.session_id:  # uploads belong to a chat session
        data.update(ctx.uploads.load_rows(ctx.project_id, ctx.username, ctx.session_id))
    if ctx.store is not None:
        data.update(ctx.store.snapshot())
    return data


@tool(label="Executing Python analysis")
async def execute_python_analysis(ctx: ToolContext, args: AnalysisArgs) -> ToolResult:
    """Run Python on stored tool results (no database, files, network) → {output,error,chart}

    Asynchronous: it awaits the sandbox; reading ``data`` blocks, so that part runs on the tool pool.
    """
    if ctx.sandbox is None:
        raise ToolError(
            "Sandbox unavailable: no sandbox is running in this service",
            "answer from the other tools' results without computation",
        )
    data = await run_blocking(data_for, ctx)
    reply = (await ctx.sandbox.run(args.code, data)).to_dict()
    chart = reply.get("chart")
    charts = [] if chart is None else chart if isinstance(chart, list) else [chart]
    return ToolResult({**reply, "chart": None}, charts=charts)
