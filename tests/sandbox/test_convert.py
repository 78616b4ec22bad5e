"""Result conversion inside the worker: plain JSON out, clear errors for the rest."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from qdash.sandbox.convert import ConversionError, build_payload, select_charts, to_jsonable


def test_scalars_containers_and_non_finite() -> None:
    value = {1: (1.5, float("inf")), "s": {2}, "n": None, "b": True, "f": np.float32(0.5)}
    assert to_jsonable(value) == {"1": [1.5, None], "s": [2], "n": None, "b": True, "f": 0.5}


def test_time_values() -> None:
    stamps = np.array(["2024-01-01T00:00", "NaT"], dtype="datetime64[m]")
    assert to_jsonable(stamps) == ["2024-01-01T00:00", None]
    assert to_jsonable(pd.Timestamp("2024-01-02T03:04:05Z")) == "2024-01-02T03:04:05+00:00"
    assert to_jsonable(pd.NaT) is None
    assert to_jsonable(dt.date(2024, 1, 2)) == "2024-01-02"
    assert to_jsonable(dt.timedelta(minutes=1)) == 60.0


def test_frames_series_and_figures() -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": [0.5, np.nan]})
    assert to_jsonable(frame) == [{"a": 1, "b": 0.5}, {"a": 2, "b": None}]
    assert to_jsonable(pd.Series([1, 2], index=["x", "y"])) == {"x": 1, "y": 2}
    figure = to_jsonable(go.Figure(go.Bar(x=["a"], y=[1])))
    assert figure["data"][0]["type"] == "bar"
    json.dumps(figure, allow_nan=False)


def test_unsupported_and_too_deep() -> None:
    with pytest.raises(ConversionError, match=r"^Unsupported result type: object$"):
        to_jsonable(object())
    deep: list[object] = []
    node = deep
    for _ in range(60):
        node.append([])
        node = node[0]  # type: ignore[assignment]
    with pytest.raises(ConversionError, match="deeper than 50"):
        to_jsonable(deep)


def test_chart_rules_and_payload() -> None:
    assert select_charts({"layout": {}}) is None
    assert select_charts([{"data": []}, "x", {"nope": 1}]) == [{"data": []}]
    assert select_charts([{"data": i} for i in range(12)]) == [{"data": i} for i in range(10)]
    payload = build_payload({"output": {"k": 1}, "chart": None}, True, "printed", None, False)
    assert payload == {"output": '{"k": 1}', "chart": None, "error": None}
    assert build_payload(None, False, "printed\n", None, False)["output"] == "printed\n"
    assert build_payload({"chart": None}, True, "fallback", 3, True)["output"] == "fallback"


def test_a_result_that_is_not_the_envelope_is_the_output() -> None:
    """``result = {"t1_mean": 42}`` used to come back as all nulls; any other value is the output."""
    stats = build_payload({"t1_mean": 42.5, "n": 3}, True, "", None, False)
    assert stats == {"output": '{"t1_mean": 42.5, "n": 3}', "chart": None, "error": None}
    mixed = build_payload({"output": "ok", "extra": [1]}, True, "", None, False)
    assert json.loads(mixed["output"]) == {"output": "ok", "extra": [1]}
    assert build_payload({}, True, "", None, False)["output"] == "{}"
    assert build_payload([1, 2], True, "", None, False)["output"] == "[1, 2]"
    envelope = build_payload({"output": "ok", "chart": {"data": []}}, True, "", None, False)
    assert envelope == {"output": "ok", "chart": {"data": []}, "error": None}
