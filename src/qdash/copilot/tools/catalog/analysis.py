"""The spec of ``execute_python_analysis``; its implementation is the sandbox client, owned by the
tool framework (``copilot/sandbox``), and bound to this spec in the registry."""

from __future__ import annotations

from pydantic import Field

from qdash.copilot.tools.catalog.args import Code, ToolArgs
from qdash.copilot.tools.spec import ToolSpec


class AnalysisArgs(ToolArgs):
    code: Code = Field(
        description="data['<key>'] holds stored tool results (data['t1'], data['chip_summary']). "
        "Imports: numpy, pandas, scipy, plotly, math, statistics, json, "
        "datetime, collections. print() or set result = {'output': str, 'chart': figure}."
    )


SPECS = [
    ToolSpec(
        name="execute_python_analysis",
        description="Run Python over data from earlier stored tools (no database, files or network). "
        "Returns {output, error, chart: null, chart_note}; charts go to the user automatically.",
        args_model=AnalysisArgs,
        label="Executing Python analysis",
    )
]
