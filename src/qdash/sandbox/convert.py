"""Turn what analysis code left behind into plain JSON bytes, inside the worker.

Why inside the worker: the host must never call a method on an object the code made (its
``__str__`` or ``to_plotly_json`` could hang or crash after the timer stopped). Conversion runs
under the worker's limits and only JSON bytes cross the pipe. numpy and pandas are looked up
among the modules already imported, never imported here: a worker that has not imported them
(the one-shot CLI on code that uses neither) can hold none of their objects.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MAX_DEPTH = 50
MAX_CHARTS = 10


class ConversionError(Exception):
    """The result cannot be expressed as JSON; the message is the model-facing error text."""


def to_jsonable(value: Any, depth: int = 0) -> Any:
    """Recursively convert ``value`` to JSON-ready Python (NaN/±Inf become ``None``)."""
    if depth > MAX_DEPTH:
        raise ConversionError("Unsupported result type: nesting deeper than 50 levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, dict):
        return {_key(k): to_jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v, depth + 1) for v in value]
    pandas = sys.modules.get("pandas")
    if pandas is not None and value is pandas.NaT:
        return None
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.ndarray):
            return _array(value, depth)
        if isinstance(value, numpy.datetime64):
            return None if numpy.isnat(value) else str(value)
        if isinstance(value, numpy.generic):
            return to_jsonable(value.item(), depth + 1)
    if pandas is not None:
        if isinstance(value, pandas.DataFrame):
            return to_jsonable(value.to_dict(orient="records"), depth + 1)
        if isinstance(value, pandas.Series):
            return to_jsonable(value.to_dict(), depth + 1)
        if isinstance(value, (pandas.Index, pandas.api.extensions.ExtensionArray)):
            return to_jsonable(list(value), depth + 1)
    if isinstance(value, dt.timedelta):  # pd.Timedelta is one
        return value.total_seconds()
    if type(value).__module__.split(".")[0] == "plotly" and hasattr(value, "to_plotly_json"):
        return to_jsonable(value.to_plotly_json(), depth + 1)
    raise ConversionError(f"Unsupported result type: {type(value).__name__}")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return str.__str__(key)
    converted = to_jsonable(key, MAX_DEPTH)
    return converted if isinstance(converted, str) else json.dumps(converted)


def _array(array: np.ndarray[Any, Any], depth: int) -> Any:
    import numpy as np  # imported already: the array is one of its objects

    if array.dtype.kind == "M":
        return [None if s == "NaT" else s for s in np.datetime_as_string(array).ravel().tolist()]
    if array.dtype.kind == "m":
        return [None if np.isnat(v) else v / np.timedelta64(1, "s") for v in array.ravel()]
    return to_jsonable(array.tolist(), depth + 1)


ENVELOPE_KEYS = frozenset({"output", "chart"})


def select_charts(chart: Any) -> Any:
    """The chart rules of docs/tools.md: a dict with ``"data"``; from a list, such dicts only."""
    if isinstance(chart, dict):
        return chart if "data" in chart else None
    if isinstance(chart, list):
        kept = [c for c in chart if isinstance(c, dict) and "data" in c][:MAX_CHARTS]
        return kept or None
    return None


def is_envelope(result: Any) -> bool:
    """``{"output": …, "chart": …}`` (either key or both, nothing else): the documented shape."""
    return isinstance(result, dict) and bool(result) and set(result) <= ENVELOPE_KEYS


def build_payload(result: Any, has_result: bool, printed: str, state: Any, has_state: bool) -> dict[str, Any]:
    """The reply fields (``output``, ``chart`` and optionally ``state``) for one finished run.

    A ``result`` in the envelope shape is split into output and chart; any other value (a dict of
    statistics, a list, a number) is the output itself, so it is never silently dropped.
    """
    output: Any = None
    chart: Any = None
    if has_result:
        if is_envelope(result):
            output = to_jsonable(result.get("output"))
            chart = select_charts(to_jsonable(result.get("chart")))
        else:
            output = to_jsonable(result)
    if output is None and printed:
        output = printed
    if output is not None and not isinstance(output, str):
        output = json.dumps(output, ensure_ascii=False, allow_nan=False)
    payload: dict[str, Any] = {"output": output, "chart": chart, "error": None}
    if has_state:
        payload["state"] = to_jsonable(state)
    return payload
