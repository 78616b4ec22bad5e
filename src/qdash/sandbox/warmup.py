"""Trusted warm-up run in the zygote before the first fork.

Why: numpy, pandas and plotly import much of themselves lazily, on first use. After the uid
switch and Landlock a worker may no longer be able to read the interpreter's files (here the
interpreter lives under ``/root``, mode 0700), and every lazy import would cost each call again.
Running typical analyses once, through the same policy the workers use, makes those imports
happen in the zygote, where forked workers inherit them for free.
"""

from __future__ import annotations

import json
import select

from qdash.sandbox import worker
from qdash.sandbox.policy import BASE_IMPORTS, preimport
from qdash.sandbox.protocol import HEAVY_MODULES, WorkerOptions

STDLIB_WARMUP_CODE = r"""
import math, statistics, json, datetime, collections
st = (statistics.mean([1, 2, 3]), statistics.median([1, 2, 3]), statistics.stdev([1, 2, 3]))
d = datetime.datetime.strptime("2024-01-02 03:04:05", "%Y-%m-%d %H:%M:%S")
s = d.strftime("%b %d %H:%M") + datetime.date(2024, 1, 2).isoformat()
delta = (d - datetime.timedelta(days=1)).isoformat()
c = collections.Counter(["a", "b", "a"]).most_common(1)
od = collections.OrderedDict(a=1); dd = collections.defaultdict(list)
js = json.dumps({"a": 1}); back = json.loads(js)
print(round(math.sqrt(2), 3))
result = {"output": "ok"}
"""
"""The standard-library part: ``datetime.strptime`` imports ``_strptime``, ``statistics`` its
helpers, on first use."""

WARMUP_CODE = (
    STDLIB_WARMUP_CODE
    + r"""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.express as px
from plotly.subplots import make_subplots
from numpy import linalg, fft, random, polynomial

rows = data["rows"]
df = pd.DataFrame(rows)
df["t"] = pd.to_datetime(df["t"])
df["day"] = df["t"].dt.strftime("%Y-%m-%d")
g = df.groupby("qid")["v"].agg(["mean", "std", "min", "max", "count"]).reset_index()
desc = df["v"].describe().to_dict()
roll = df.set_index("t")["v"].rolling(2).mean().tolist()
res = df.set_index("t")["v"].resample("1D").mean().dropna().tolist()
piv = df.pivot_table(index="qid", columns="day", values="v", aggfunc="mean")
num = pd.to_numeric(pd.Series(["1", "2", "x"]), errors="coerce").fillna(0).sum()
merged = pd.merge(df, g, on="qid", how="left").sort_values("v").head(3)
corr = df[["v", "w"]].corr().to_numpy()
x = np.arange(10.0)
fit = np.polyfit(x, 2 * x + 1, 1)
poly = np.polynomial.Polynomial.fit(x, x ** 2, 2)
inv = linalg.inv(np.eye(3) * 2.0)
spec = np.abs(fft.rfft(np.sin(x)))
rng = random.default_rng(0)
noise = rng.normal(0, 1, 8)
pct = np.percentile(x, [5, 50, 95])
hist, edges = np.histogram(x, bins=4)
fig = make_subplots(rows=2, cols=2, subplot_titles=("a", "b", "c", "d"))
fig.add_trace(go.Scatter(x=x, y=x, mode="lines+markers", name="s"), row=1, col=1)
fig.add_trace(go.Bar(x=["a", "b"], y=[1, 2]), row=1, col=2)
fig.add_trace(go.Heatmap(z=[[1, 2], [3, 4]]), row=2, col=1)
fig.add_trace(go.Histogram(x=noise), row=2, col=2)
fig.update_layout(title="w", template="plotly_white")
fig2 = go.Figure(go.Scatter(x=df["t"], y=df["v"], error_y=dict(type="data", array=df["w"])))
fig2.add_hline(y=1.0); fig2.update_xaxes(title="t"); fig2.update_yaxes(type="log")
fig3 = px.scatter(df, x="t", y="v", color="qid", title="px")
fig4 = px.line(df, x="t", y="v", color="qid"); fig5 = px.histogram(df, x="v")
fig6 = px.box(df, x="qid", y="v"); fig7 = px.bar(g, x="qid", y="mean")
print(g.to_string(), df.head().to_string(), f"{fit[0]:.3f}", round(math.sqrt(2), 3))
state = {"n": len(rows)}
result = {"output": "ok", "chart": [fig, fig2, fig3, fig4, fig5, fig6, fig7.to_dict()]}
"""
)

PREFAULT_STEPS: tuple[str, ...] = (
    "result = {'output': [1, 2.5, None, 'x']}\nprint('ok')",
    "import numpy as np\nx = np.arange(8.0)\nfit = np.polyfit(x, 2 * x, 1)\n"
    "p = np.percentile(x, [5, 95])\nh = np.histogram(x, bins=3)\nresult = {'output': fit}",
    "import pandas as pd\ndf = pd.DataFrame(data['rows'])\ndf['t'] = pd.to_datetime(df['t'])\n"
    "g = df.groupby('qid')[['v', 'w']].agg(['mean', 'std']).round(3).to_string()\n"
    "s = df['t'].dt.strftime('%Y-%m-%d').tolist()\nresult = {'output': g}",
    "import plotly.graph_objects as go\nfig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name='a'))\n"
    "fig.update_layout(title='p')\nresult = {'output': 'f', 'chart': fig}",
)
"""Short trusted runs a spare worker makes after lockdown, while it waits for its request: they
take the copy-on-write page faults of the common paths off the call's critical path. The worker
stops between steps as soon as its request arrives, so a burst of calls is never held up by more
than one step."""

WARMUP_DATA = {
    "rows": [
        {"qid": str(i % 3), "t": f"2024-01-0{1 + i % 5}T0{i % 9}:00:00Z", "v": float(i), "w": 0.1 * i}
        for i in range(12)
    ]
}


def prefault(options: WorkerOptions, request_fd: int) -> None:
    """Run :data:`PREFAULT_STEPS` in a spare worker until its request starts to arrive."""
    for step in _PREFAULT_REQUESTS:
        if select.select([request_fd], [], [], 0)[0]:
            return
        worker.execute(step, options)


_PREFAULT_REQUESTS = tuple(
    json.dumps({"code": code, "data": {"rows": WARMUP_DATA["rows"][:6]}}).encode() for code in PREFAULT_STEPS
)


def warm_up(options: WorkerOptions) -> dict[str, object]:
    """Import the allowed modules and run the analyses above; returns the reply (for tests).

    Without ``options.full_warm_up`` (the one-shot ``qdash sandbox run`` of code that imports none
    of numpy, pandas and plotly) only the standard-library modules and their warm-up: the heavy
    imports are most of a zygote's start, and the code cannot reach those modules anyway."""
    if options.full_warm_up:
        preimport()
        code = WARMUP_CODE
    else:
        preimport(name for name in BASE_IMPORTS if name.partition(".")[0] not in HEAVY_MODULES)
        code = STDLIB_WARMUP_CODE
    request = json.dumps({"code": code, "data": WARMUP_DATA, "state": None}).encode()
    reply: dict[str, object] = json.loads(worker.execute(request, options))
    return reply
