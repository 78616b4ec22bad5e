"""The spec of ``execute_python_analysis``; its implementation is the sandbox client, owned by the
tool framework (``qdash.sandbox``), and bound to this spec in the registry."""

from __future__ import annotations

from pydantic import Field

from qdash.copilot.tools.catalog.args import Code, ToolArgs
from qdash.copilot.tools.spec import ToolSpec
from qdash.sandbox.policy import imports_for_the_model


class AnalysisArgs(ToolArgs):
    code: Code = Field(
        description=f"Imports: {imports_for_the_model()}. print() or result = "
        "{'output': str, 'chart': figure} or any JSON value"
    )


SPECS = [
    ToolSpec(
        name="execute_python_analysis",
        description="Run Python on stored tool results (no database, files, network) → {output,error,"
        "chart,chart_note}",
        args_model=AnalysisArgs,
        label="Executing Python analysis",
    )
]
