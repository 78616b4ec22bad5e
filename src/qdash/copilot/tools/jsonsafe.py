"""Make any tool result JSON-safe: NaN/±Inf → null, datetimes → ISO strings, ObjectId → str, numpy → Python.

Why one function: tool results go to three places (the model, the data store, the sandbox) and all
three need strict JSON (``allow_nan=False``); doing the conversion once, before anything else, means
no wrapper has to care what a pymongo document or a numpy array looks like.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

MAX_DEPTH = 64


class Shown(float):
    """A float a tool already rounded for the model with more than 4 significant figures
    (``catalog.formatting.shown``: GHz to 6): the compaction wrapper keeps its digits instead of
    rounding it to 4, so neighbouring qubits (8.4795 vs 8.4804 GHz) do not tie in the model's view.
    JSON writes it as the plain number it is."""


def json_safe(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` made of dict/list/str/int/float/bool/None only."""
    if _depth > MAX_DEPTH:
        return "<nested too deeply>"
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v, _depth + 1) for v in value]
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return json_safe(float(value), _depth)
    if hasattr(value, "tolist"):  # numpy arrays and scalars, pandas objects
        return json_safe(value.tolist(), _depth + 1)
    if hasattr(value, "item"):
        return json_safe(value.item(), _depth + 1)
    return str(value)  # ObjectId, UUID, Binary, enums: their text is what a reader needs


def dumps(value: Any) -> str:
    """Compact strict JSON (no NaN), non-ASCII kept: ``μs`` costs one token, ``\\u03bcs`` several."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
