"""Is the answer in what the model saw? Format-agnostic reading of tool outputs.

Tool outputs are JSON whose shape changes as tools improve (tables as ``cols``/``rows``, dicts
keyed by qid, nested ``data``), so nothing here knows a tool. Evidence kinds (``grader.evidence``):

- ``appear``: every element of the truth is written somewhere (a number within tolerance, an id as
  a JSON string or key, a date in any of the tools' date forms, a phrase).
- ``records``: the answer can be *derived* from per-id values the model saw: the question's
  selection rule (threshold, k lowest/highest, count) applied to the seen values of every
  competing id gives the truth; or a list of exactly the answer ids is shown.
- ``exclusive``: the truth ids appear and are singled out: at most 2 × |answer| + ``EXCLUSIVE_SLACK``
  ids of that kind are shown in all (a list of every qubit singles out nothing).
- ``pairs``: the neighbours of ``truth.subject`` follow from the coupling pairs shown.

Numbers are read in the unit the output states for them, as a reader would: the ``unit`` of the
object they sit in (``{"value": 95.83, "unit": "%"}``, a table's ``unit`` column, a result's
top-level ``unit``), or a field's unit the output declares (``"units": {"t1": "μs"}``, or a key
whose object states one, as ``statistics.t1.unit`` declares the ``t1`` column). They are converted
to the truth's unit through ``matching.UNIT_FACTORS``, so 95.83 % is 0.9583 a.u.; counts and
relative changes beside a ``unit`` (``count``, ``num_*``, ``*_pct``…) are not in it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from qdash.evaluation.matching import (
    COMPACT_DATE,
    EXECUTION,
    ISO_DATE,
    MONTH_DAY,
    UNIT_FACTORS,
    canonical,
    dates_in,
    normalise_id,
    within,
)
from qdash.evaluation.questions import GraderSpec, IdKind
from qdash.evaluation.truth import Truth

EXCLUSIVE_SLACK = 3
"""``exclusive``: at most 2 × |answer| + this many ids of the kind may be shown in all."""
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
NAMES_IN_TEXT = (
    re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", re.IGNORECASE),
    MONTH_DAY,
    ISO_DATE,
    COMPACT_DATE,
    EXECUTION,
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"),
)
"""Ids, dates and times inside strings (a task id, ``11-28 04:45``): their digits are no quantity
shown, so a count of 45 is not "shown" by a task id holding ``5a45``."""
ID_FIELDS = {"qid": ("qid", "qubit", "qubit_id"), "coupling": ("coupling_id", "coupling", "qid")}
VALUE_FIELDS = ("value", "latest", "current")
UNITLESS = re.compile(r"^(?:count|n|version|step|(?:num|total)_\w+|\w+_(?:counts?|pct))$")
"""Keys of counts, versions and relative changes: numbers beside a ``unit`` that are not in it."""


@dataclass(frozen=True)
class Quantity:
    """One number shown, with the unit the output states for it (``""`` when none)."""

    value: float
    unit: str = ""

    def factor(self, unit: str) -> float | None:
        """Factor to ``unit``, or ``None`` when the shown unit is not one of its kind."""
        if self.unit == unit:
            return 1.0
        return UNIT_FACTORS.get(unit, {}).get(self.unit)

    def to(self, unit: str) -> float:
        """The value in ``unit``; as shown when its unit does not convert (as the graders read text)."""
        return self.value * (self.factor(unit) or 1.0)


@dataclass
class Seen:
    """What one tool call showed the model: its text, plus the chart types it attached."""

    text: str
    charts: list[str] = field(default_factory=list)

    @property
    def tree(self) -> Any:
        try:
            return json.loads(self.text)
        except ValueError:
            return self.text


def declared_units(tree: Any) -> dict[str, str]:
    """Field → unit as the output declares it: ``units`` maps, a key whose object states a ``unit``
    (``statistics.t1.unit`` → ``t1``), and ``parameter_name``/``metric_name`` beside a ``unit``."""
    found: dict[str, str] = {}
    for _, node, _ in _walk(tree, fields={}):
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("units"), dict):
            found.update({k: u for k, u in node["units"].items() if isinstance(u, str)})
        for key, value in node.items():
            if isinstance(value, dict) and isinstance(value.get("unit"), str):
                found.setdefault(str(key), value["unit"])
        if isinstance(node.get("unit"), str) and (about := _parameter_of(node)):
            found.setdefault(about, node["unit"])
    return found


def _unit_under(key: str, context: str, fields: dict[str, str]) -> str:
    """The unit of a value under ``key`` in an object whose unit is ``context``."""
    if UNITLESS.match(key):
        return ""
    return fields.get(key) or fields.get(key.partition(".")[0]) or context  # "t2_echo.error" → t2_echo's


def _walk(
    node: Any, parent: str = "", unit: str = "", fields: dict[str, str] | None = None
) -> Iterator[tuple[str, Any, str]]:
    """Every (key it sits under, value, unit that applies to it) in a JSON tree, tables expanded to
    row dicts; ``fields`` are the output's :func:`declared_units` (read from ``node`` when omitted)."""
    if fields is None:
        fields = declared_units(node)
    yield parent, node, unit
    if isinstance(node, dict):
        context = node["unit"] if isinstance(node.get("unit"), str) else unit
        cols, rows = node.get("cols"), node.get("rows")
        table = False
        if isinstance(cols, list) and isinstance(rows, list):
            table = True
            for row in rows:
                if isinstance(row, list) and len(row) == len(cols):  # as {col: cell}: the cols' units
                    yield from _walk(dict(zip(cols, row, strict=True)), parent, context, fields)
                else:
                    yield from _walk(row, "rows", context, fields)
        for key, value in node.items():
            if not (table and key == "rows"):
                yield from _walk(str(key), parent, "", fields)
                yield from _walk(value, str(key), _unit_under(str(key), context, fields), fields)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item, parent, unit, fields)


def seen_quantities(seen: list[Seen]) -> list[Quantity]:
    """Every number shown with its unit: JSON numbers, and numbers written inside strings (unitless)."""
    found: list[Quantity] = []
    for output in seen:
        for _, value, unit in _walk(output.tree):
            if isinstance(value, bool):
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                found.append(Quantity(float(value), unit))
            elif isinstance(value, str):
                found += [Quantity(float(n)) for n in NUMBER.findall(_without_names(value))]
    return found


def _without_names(text: str) -> str:
    for pattern in NAMES_IN_TEXT:
        text = pattern.sub(" ", text)
    return text


def seen_numbers(seen: list[Seen], unit: str = "") -> list[float]:
    """Every number shown, in ``unit`` where it was shown in another unit of its kind."""
    return [quantity.to(unit) for quantity in seen_quantities(seen)]


def _ids(seen: list[Seen], kind: IdKind) -> set[str]:
    found: set[str] = set()
    for output in seen:
        if kind in {"execution", "name"}:
            found |= {m.lower() for m in re.findall(r"[A-Za-z0-9_.-]+", output.text)}
            continue
        for _, value, _ in _walk(output.tree):
            if isinstance(value, str):
                normal = normalise_id(kind, value)
                if normal is not None:
                    found.add(normal)
    return found


def _as_quantity(value: Any, unit: str) -> Quantity | None:
    """A shown value (a number, or an object with ``value`` and maybe its ``unit``) in ``unit`` unless
    it states its own."""
    if isinstance(value, dict):
        unit = value["unit"] if isinstance(value.get("unit"), str) else unit
        value = next((value[k] for k in VALUE_FIELDS if k in value), None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Quantity(float(value), unit)
    return None


def _parameter_of(tree: Any) -> str:
    return str(tree.get("parameter_name") or tree.get("metric_name") or "") if isinstance(tree, dict) else ""


def records(seen: list[Seen], parameter: str, kind: IdKind, unit: str = "") -> dict[str, float]:
    """id → value of ``parameter`` in ``unit`` wherever an id and its value are shown together
    (first wins)."""
    found: dict[str, float] = {}

    def keep(raw_id: Any, value: Any, shown_in: str) -> None:
        normal = normalise_id(kind, str(raw_id)) if isinstance(raw_id, str | int) else None
        quantity = _as_quantity(value, shown_in)
        if normal is not None and quantity is not None:
            found.setdefault(normal, quantity.to(unit))

    for output in seen:
        tree = output.tree
        about = _parameter_of(tree)
        fields = declared_units(tree)
        for key, node, shown_in in _walk(tree, fields=fields):
            if isinstance(node, dict):
                context = node["unit"] if isinstance(node.get("unit"), str) else shown_in
                inner = _unit_under(parameter, context, fields)
                entity = next((node[f] for f in ID_FIELDS[kind] if f in node), None)
                if entity is not None:
                    keep(entity, _value_in(node, parameter, about), inner)
                for raw_id, value in node.items():  # keyed by id: {"16": {...}} or {"16": 45.2}
                    if normalise_id(kind, str(raw_id)) is not None:
                        direct = value if (parameter in (key, about)) else None
                        picked = _value_in(value, parameter, about) if isinstance(value, dict) else direct
                        keep(raw_id, picked, inner)
            elif isinstance(node, list) and len(node) == 2 and (parameter in (key, about)):
                keep(node[0], node[1], shown_in)  # [id, value] pairs
    return found


def _value_in(node: dict[str, Any], parameter: str, about: str) -> Any:
    """The parameter's value inside one entity (directly, or one level down as in ``data``)."""
    if parameter in node:
        return node[parameter]
    for value in node.values():
        if isinstance(value, dict) and parameter in value:
            return value[parameter]
    if about == parameter:
        return next((node[k] for k in VALUE_FIELDS if k in node), None)
    return None


def _id_lists(seen: list[Seen], kind: IdKind) -> list[set[str]]:
    """Every JSON list made only of ids of ``kind`` (a tool that names the answer directly)."""
    lists: list[set[str]] = []
    for output in seen:
        for _, node, _ in _walk(output.tree):
            if isinstance(node, list) and node and all(isinstance(i, str) for i in node):
                normal = [normalise_id(kind, i) for i in node]
                if all(n is not None for n in normal):
                    lists.append({n for n in normal if n is not None})
    return lists


def _pairs(seen: list[Seen]) -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for output in seen:
        for key, node, _ in _walk(output.tree):
            if isinstance(node, str):
                normal = normalise_id("coupling", node)
                if normal is not None:
                    a, b = normal.split("-")
                    pairs.add((a, b))
            elif _int_pair(node) and "coupl" in key:  # "couplings": [[q1, q2], …]
                pairs.add((str(node[0]), str(node[1])))
    return pairs


def _int_pair(node: Any) -> bool:
    return isinstance(node, list) and len(node) == 2 and all(isinstance(i, int) for i in node)


def visible(truth: Truth, grader: GraderSpec, seen: list[Seen]) -> tuple[bool, str]:
    """Whether the whole answer is in ``seen``, and why not."""
    text = "\n".join(output.text for output in seen)
    if truth.kind == "clarify":
        return True, "needs no data"
    if truth.kind == "chart":
        return (truth.chart in {c for o in seen for c in o.charts}), f"no {truth.chart} chart attached"
    if truth.kind == "refusal":  # a leak in any unit: as shown, and converted to the stored one
        numbers = [n for q in seen_quantities(seen) for n in (q.value, q.to(truth.unit))]
        leaked = [f for f in truth.forbidden if any(math.isclose(n, float(f), rel_tol=5e-4) for n in numbers)]
        return (not leaked), f"another project's values shown: {leaked}"
    if truth.kind == "assessment":
        return _appear(truth, grader, seen, text)
    if grader.evidence == "records" and truth.selection is not None:
        return _derivable(truth, grader, seen)
    if grader.evidence == "pairs":
        pairs = _pairs(seen)
        partners = {b for a, b in pairs if a == truth.subject} | {a for a, b in pairs if b == truth.subject}
        return partners == set(truth.ids), f"neighbours derivable from the pairs shown: {sorted(partners)}"
    ok, why = _appear(truth, grader, seen, text)
    if ok and grader.evidence == "exclusive":
        shown = _ids(seen, grader.id_kind)
        if len(shown) > 2 * len(truth.ids) + EXCLUSIVE_SLACK:
            return False, f"the answer is among {len(shown)} ids shown alike; nothing singles it out"
    return ok, why


def _appear(truth: Truth, grader: GraderSpec, seen: list[Seen], text: str) -> tuple[bool, str]:
    if truth.numbers:
        numbers = seen_numbers(seen, grader.unit or truth.unit)
        missing = [t for t in truth.numbers if not any(within(n, t, grader) for n in numbers)]
        if missing:
            return False, f"numbers not shown: {missing}"
    if truth.ids:
        missing_ids = canonical(grader.id_kind, truth.ids) - _ids(seen, grader.id_kind)
        if missing_ids:
            return False, f"ids not shown: {sorted(missing_ids)}"
    if truth.dates:
        year = int(truth.dates[0][:4])
        shown = {d.isoformat() for d in dates_in(text, year)}
        missing_dates = [d for d in truth.dates if d not in shown]
        if missing_dates:
            return False, f"dates not shown: {missing_dates}"
    lowered = text.lower()
    missing_texts = [t for t in truth.texts if t.lower() not in lowered]
    if missing_texts:
        return False, f"text not shown: {missing_texts}"
    return True, "shown"


def _derivable(truth: Truth, grader: GraderSpec, seen: list[Seen]) -> tuple[bool, str]:
    selection = truth.selection
    assert selection is not None
    kind: IdKind = "coupling" if selection.target == "coupling" else "qid"
    values = records(seen, selection.parameter, kind, selection.unit)
    pool = canonical(kind, selection.within) if selection.within else None
    if pool is not None:
        values = {k: v for k, v in values.items() if k in pool}
    if truth.kind == "ids":
        answer = canonical(kind, truth.ids)
        if any(shown == answer for shown in _id_lists(seen, kind)):
            return True, "the answer ids are listed"
    if len(values) < truth.candidates:
        return False, f"{selection.parameter} shown for {len(values)} of {truth.candidates} ids"
    picked = selection.model_copy(update={"within": []}).pick(values)
    if truth.kind == "number":
        return within(len(picked), truth.numbers[0], grader), f"derived count {len(picked)}"
    return set(picked) == canonical(kind, truth.ids), f"derived {picked}"
