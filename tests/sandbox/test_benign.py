"""Realistic analyses must work through the pool, with the expected output and charts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qdash.sandbox import SandboxPool, SandboxResult

ROWS = [
    {"qid": str(q), "t1": 40.0 + q * 5 + d, "calibrated_at": f"2024-03-0{1 + d}T10:00:00+00:00"}
    for q in range(4)
    for d in range(3)
]


def _ran(sandbox: SandboxPool, code: str, data: dict[str, Any] | None = None) -> SandboxResult:
    """The reply to ``code``, which must have run without an error."""
    reply = sandbox.run_sync(code, data)
    assert reply.error is None, reply.error
    return reply


ANALYSES: dict[str, tuple[str, dict[str, Any] | None, Any]] = {
    "stats with statistics and numpy": (
        "import statistics, math\nimport numpy as np\nv = [r['t1'] for r in data['t1']]\n"
        "result = {'output': {'mean': statistics.mean(v), 'std': round(float(np.std(v)), 4), "
        "'max': max(v), 'sqrt': math.sqrt(4)}}",
        {"t1": ROWS},
        {"mean": 48.5, "std": 5.6495, "max": 57.0, "sqrt": 2.0},
    ),
    "polyfit trend": (
        "import numpy as np\nx = np.arange(5.0)\nslope, icpt = np.polyfit(x, 3 * x + 2, 1)\n"
        "print(f'{slope:.2f} {icpt:.2f}')",
        None,
        "3.00 2.00\n",
    ),
    "groupby and dataframe result": (
        "import pandas as pd\ndf = pd.DataFrame(data['t1'])\n"
        "g = df.groupby('qid')['t1'].agg(['mean', 'count']).reset_index()\n"
        "result = {'output': g.to_dict(orient='records')}",
        {"t1": ROWS},
        [{"qid": str(q), "mean": 41.0 + 5 * q, "count": 3} for q in range(4)],
    ),
    "datetime parsing and strftime": (
        "import datetime\nimport pandas as pd\n"
        "d = datetime.datetime.strptime('2024-03-01 10:00', '%Y-%m-%d %H:%M')\n"
        "ts = pd.to_datetime(pd.Series([r['calibrated_at'] for r in data['t1']]))\n"
        "print(d.strftime('%d %b %Y'), ts.dt.strftime('%m-%d').iloc[-1], ts.max().isoformat())",
        {"t1": ROWS},
        "01 Mar 2024 03-03 2024-03-03T10:00:00+00:00\n",
    ),
    "non-string output becomes json and nan null": (
        "import numpy as np\nresult = {'output': {'a': np.float64('nan'), 'b': np.arange(2), 1: (1, 2)}}",
        None,
        {"a": None, "b": [0, 1], "1": [1, 2]},
    ),
    "classes, star args and comprehensions": (
        "class Acc:\n    def __init__(self):\n        self.total = 0\n"
        "    def add(self, *vals, **kw):\n        self.total = self.total + sum(vals) + kw.get('extra', 0)\n"
        "a = Acc()\nargs = [1, 2]\na.add(*args, **{'extra': 3})\n"
        "pairs = {k: v for k, v in zip('ab', [1, 2])}\n"
        "print(a.total, pairs, sorted(set([3, 1])), any([0, 1]))",
        None,
        "6 {'a': 1, 'b': 2} [1, 3] True\n",
    ),
}
"""Name → (code, data, expected): the printed text when ``expected`` is a string, else the
``result`` output as JSON."""


@pytest.mark.parametrize(("code", "data", "expected"), ANALYSES.values(), ids=list(ANALYSES))
def test_analysis_output(sandbox: SandboxPool, code: str, data: dict[str, Any] | None, expected: Any) -> None:
    output = _ran(sandbox, code, data).output or ""
    assert (output if isinstance(expected, str) else json.loads(output)) == expected


def test_plotly_figure_object_becomes_chart(sandbox: SandboxPool) -> None:
    code = (
        "import plotly.graph_objects as go\n"
        "fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name='t1'))\n"
        "fig.update_layout(title='T1')\nresult = {'output': 'plotted', 'chart': fig}"
    )
    reply = _ran(sandbox, code)
    assert reply.output == "plotted"
    assert isinstance(reply.chart, dict) and reply.chart["data"][0]["name"] == "t1"
    assert reply.chart["layout"]["title"]["text"] == "T1"


def test_subplots_and_express_list_of_charts(sandbox: SandboxPool) -> None:
    code = (
        "import pandas as pd\nimport plotly.express as px\nfrom plotly.subplots import make_subplots\n"
        "import plotly.graph_objects as go\ndf = pd.DataFrame(data['t1'])\n"
        "sub = make_subplots(rows=1, cols=2)\nsub.add_trace(go.Bar(x=['a'], y=[1]), row=1, col=2)\n"
        "sc = px.scatter(df, x='calibrated_at', y='t1', color='qid')\n"
        "result = {'output': 'two', 'chart': [sub, sc, {'no': 'data'}]}"
    )
    reply = _ran(sandbox, code, {"t1": ROWS})
    assert isinstance(reply.chart, list) and len(reply.chart) == 2
    assert all("data" in c for c in reply.chart)


def test_chart_dict_without_data_is_dropped(sandbox: SandboxPool) -> None:
    reply = _ran(sandbox, "result = {'output': 'x', 'chart': {'layout': {}}}")
    assert reply.chart is None and reply.output == "x"


def test_state_round_trip(sandbox: SandboxPool) -> None:
    first = sandbox.run_sync("state = {'count': 1}\nprint('set')")
    assert first.has_state and first.state == {"count": 1}
    second = sandbox.run_sync(
        "state['count'] = state['count'] + 1\nprint(state['count'])", state=first.state, send_state=True
    )
    assert second.output == "2\n" and second.state == {"count": 2}


def test_runtime_error_names_the_line(sandbox: SandboxPool) -> None:
    reply = sandbox.run_sync("x = 1\ny = data['missing']")
    assert reply.error == "KeyError: 'missing' (line 2)"


def test_syntax_error_is_verbatim(sandbox: SandboxPool) -> None:
    reply = sandbox.run_sync("x = (")
    assert reply.error is not None and reply.error.startswith("SyntaxError: Line 1: SyntaxError:")


def test_input_cap_is_checked_before_sending(sandbox: SandboxPool) -> None:
    big: dict[str, Any] = {"x": "a" * (sandbox.settings.input_bytes + 1)}
    reply = sandbox.run_sync("print(1)", big)
    assert reply.error is not None and reply.error.startswith("Input too large:")


def test_concurrent_calls(sandbox: SandboxPool) -> None:
    import asyncio

    async def burst() -> list[str | None]:
        calls = [sandbox.run(f"print({i} * 2)") for i in range(8)]
        return [r.output for r in await asyncio.gather(*calls)]

    loop = sandbox._loop
    assert loop is not None
    outputs = asyncio.run_coroutine_threadsafe(burst(), loop).result(60)
    assert outputs == [f"{i * 2}\n" for i in range(8)]
