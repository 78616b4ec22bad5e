"""Compaction of what the model sees: same information, a fraction of the tokens.

Why: tool results are re-sent to the model on every later round of a turn, so every digit and
repeated key is paid for many times. Rules, all idempotent (compacting twice changes nothing):
- numbers to 4 significant figures, integral values as ``int``, non-finite as ``null``, except the
  ones a tool rounded to more figures on purpose (``jsonsafe.Shown``: GHz to 6);
- ISO timestamps shown as the tools show times (``catalog.formatting.TimeFormat``: ``MM-DD HH:MM``
  in the deployment timezone, ``YYYY-MM-DD HH:MM`` when the result has times outside the current
  year), and the zone named once, as ``timezone`` on the output, when it shows any time;
- a list of ≥ 3 dicts with the same keys becomes ``{"cols": [...], "rows": [[...], ...]}``; columns
  null in every row are dropped; a unit shared by a whole column is hoisted into ``"units"``.
Only the model's view is compacted; the data store keeps full precision and ISO timestamps.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator
from typing import Any

from qdash.copilot.tools.catalog.formatting import SHOWN_TIME, TimeFormat
from qdash.copilot.tools.jsonsafe import Shown

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
MIN_TABLE_ROWS = 3


def round_sig(value: float, digits: int = 4) -> float | int | None:
    """``45.23456789012`` → ``45.23``; ``5.0`` → ``5``; NaN/Inf → ``None``."""
    if not math.isfinite(value):
        return None
    rounded = float(f"{value:.{digits}g}")
    if rounded.is_integer() and abs(rounded) < 1e15:
        return int(rounded)
    return rounded


def _parse_iso(text: str) -> dt.datetime | None:
    if not _ISO.match(text):
        return None
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item)


def compact(value: Any, timezone: str = "UTC", now: dt.datetime | None = None) -> Any:
    """The compacted copy of a JSON-safe value (see the module docstring for the rules)."""
    moments = [parsed for text in _strings(value) if (parsed := _parse_iso(text)) is not None]
    out = _Compactor(TimeFormat(timezone, moments, now)).walk(value)
    shows_times = any(SHOWN_TIME.match(text) for text in _strings(out))
    if isinstance(out, dict) and shows_times and "timezone" not in out:
        out["timezone"] = timezone
    return out


class _Compactor:
    def __init__(self, times: TimeFormat) -> None:
        self.times = times

    def walk(self, value: Any) -> Any:
        if isinstance(value, bool) or value is None or isinstance(value, int):
            return value
        if isinstance(value, Shown):
            return value
        if isinstance(value, float):
            return round_sig(value)
        if isinstance(value, str):
            parsed = _parse_iso(value)
            return value if parsed is None else self.times(parsed)
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        if isinstance(value, list):
            items = [self.walk(v) for v in value]
            return _table(items) or items
        return value


def _table(items: list[Any]) -> dict[str, Any] | None:
    """Rows of uniform dicts → columns; ``None`` when the list is not such a table."""
    if len(items) < MIN_TABLE_ROWS or not all(isinstance(i, dict) for i in items):
        return None
    cols = list(items[0])
    if not cols or any(list(i) != cols and set(i) != set(cols) for i in items):
        return None
    columns = {c: [row.get(c) for row in items] for c in cols}
    columns = {c: values for c, values in columns.items() if any(v is not None for v in values)}
    table: dict[str, Any] = {}
    units: dict[str, Any] = {}
    for name, values in list(columns.items()):
        unit = _shared_unit(values)
        if unit is not None:
            units[name] = unit
            columns[name] = [_without_unit(v) for v in values]
    if "unit" in columns and len({_key(v) for v in columns["unit"]}) == 1:
        table["unit"] = columns.pop("unit")[0]
    if units:
        table["units"] = units
    table["cols"] = list(columns)
    table["rows"] = [list(row) for row in zip(*columns.values(), strict=True)]
    return table


def _key(value: Any) -> Any:
    return repr(value) if isinstance(value, dict | list) else value


def _shared_unit(values: list[Any]) -> Any:
    """The unit when every non-null cell is ``{"value": …, "unit": u, …}`` with the same ``u``."""
    cells = [v for v in values if v is not None]
    if not cells or not all(isinstance(v, dict) and "value" in v and "unit" in v for v in cells):
        return None
    found = {v["unit"] for v in cells}
    return found.pop() if len(found) == 1 else None


def _without_unit(cell: Any) -> Any:
    if not isinstance(cell, dict):
        return cell
    rest = {k: v for k, v in cell.items() if k != "unit"}
    return rest["value"] if list(rest) == ["value"] else rest
