"""The analysis the demo model sends to ``execute_python_analysis`` for "which qubits lost X?".

Why in the sandbox: the question needs per-qubit arithmetic over a stored time series that the
model never sees (the tool hands the model a summary and the sandbox the rows), exactly the path a
real model takes. The code is a template filled with the data key and the metric's title only.
"""

from __future__ import annotations

import json

LOSS_THRESHOLD = 0.10
"""A qubit "lost" a metric when its last value in the window is at least this fraction below its first."""
WINDOW_DAYS = 7
MAX_BARS = 20

_TEMPLATE = """\
import json
from datetime import datetime, timedelta
import plotly.graph_objects as go

rows = data[KEY]["timeseries"]
if not rows:
    result = {"output": json.dumps({"compared": 0, "lost": [], "start": None, "end": None}), "chart": None}
else:
    end = max(datetime.fromisoformat(row["t"]) for row in rows)
    start = end - timedelta(days=WINDOW_DAYS)
    series = {}
    for row in rows:
        when = datetime.fromisoformat(row["t"])
        if when >= start and row["v"] is not None:
            series.setdefault(row["qid"], []).append((when, row["v"]))
    lost = []
    compared = 0
    for qid, points in series.items():
        if len(points) < 2:
            continue
        points.sort()
        compared += 1
        first = points[0][1]
        last = points[-1][1]
        if first and (last - first) / abs(first) <= -THRESHOLD:
            change = round(100 * (last - first) / abs(first), 1)
            lost.append({"qid": qid, "first": first, "last": last, "change_pct": change})
    lost.sort(key=lambda item: item["change_pct"])
    shown = lost[:MAX_BARS]
    bars = go.Bar(x=["Q" + item["qid"] for item in shown], y=[item["change_pct"] for item in shown])
    figure = go.Figure(bars)
    figure.update_layout(
        title=TITLE + " change over the last " + str(WINDOW_DAYS) + " days (qubits that lost it)",
        xaxis_title="qubit",
        yaxis_title="change (%)",
    )
    summary = {
        "compared": compared,
        "lost": lost,
        "start": start.strftime("%Y-%m-%d %H:%M %Z").strip(),
        "end": end.strftime("%Y-%m-%d %H:%M %Z").strip(),
    }
    result = {"output": json.dumps(summary), "chart": figure if shown else None}
"""


def loss_analysis_code(data_key: str, title: str) -> str:
    """The sandbox code that finds the qubits whose ``data_key`` series dropped in the window."""
    header = (
        f"KEY = {json.dumps(data_key)}\nTITLE = {json.dumps(title)}\n"
        f"THRESHOLD = {LOSS_THRESHOLD}\nWINDOW_DAYS = {WINDOW_DAYS}\nMAX_BARS = {MAX_BARS}\n"
    )
    return header + _TEMPLATE
