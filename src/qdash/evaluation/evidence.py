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
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from qdash.evaluation.matching import canonical, dates_in, normalise_id, within
from qdash.evaluation.questions import GraderSpec, IdKind
from qdash.evaluation.truth import Truth

EXCLUSIVE_SLACK = 3
"""``exclusive``: at most 2 × |answer| + this many ids of the kind may be shown in all."""
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
ID_FIELDS = {"qid": ("qid", "qubit", "qubit_id"), "coupling": ("coupling_id", "coupling", "qid")}
VALUE_FIELDS = ("value", "latest", "current")


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


def _walk(node: Any, parent: str = "") -> Iterator[tuple[str, Any]]:
    """Every (key it sits under, value) in a JSON tree, tables expanded to row dicts."""
    yield parent, node
    if isinstance(node, dict):
        cols, rows = node.get("cols"), node.get("rows")
        if isinstance(cols, list) and isinstance(rows, list):
            for row in rows:
                if isinstance(row, list) and len(row) == len(cols):
                    yield from _walk(dict(zip(cols, row, strict=True)), parent)
        for key, value in node.items():
            yield from _walk(str(key), parent)
            yield from _walk(value, str(key))
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item, parent)


def seen_numbers(seen: list[Seen]) -> list[float]:
    """Every number shown: JSON numbers and numbers written inside strings."""
    found: list[float] = []
    for output in seen:
        for _, value in _walk(output.tree):
            if isinstance(value, bool):
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                found.append(float(value))
            elif isinstance(value, str):
                found += [float(n) for n in NUMBER.findall(value)]
    return found


def _ids(seen: list[Seen], kind: IdKind) -> set[str]:
    found: set[str] = set()
    for output in seen:
        if kind in {"execution", "name"}:
            found |= {m.lower() for m in re.findall(r"[A-Za-z0-9_.-]+", output.text)}
            continue
        for _, value in _walk(output.tree):
            if isinstance(value, str):
                normal = normalise_id(kind, value)
                if normal is not None:
                    found.add(normal)
    return found


def _as_number(value: Any) -> float | None:
    if isinstance(value, dict):
        value = next((value[k] for k in VALUE_FIELDS if k in value), None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _parameter_of(tree: Any) -> str:
    return str(tree.get("parameter_name") or tree.get("metric_name") or "") if isinstance(tree, dict) else ""


def records(seen: list[Seen], parameter: str, kind: IdKind) -> dict[str, float]:
    """id → value of ``parameter`` wherever an id and its value are shown together (first wins)."""
    found: dict[str, float] = {}

    def keep(raw_id: Any, value: Any) -> None:
        normal = normalise_id(kind, str(raw_id)) if isinstance(raw_id, str | int) else None
        number = _as_number(value)
        if normal is not None and number is not None:
            found.setdefault(normal, number)

    for output in seen:
        tree = output.tree
        about = _parameter_of(tree)
        for key, node in _walk(tree):
            if isinstance(node, dict):
                entity = next((node[f] for f in ID_FIELDS[kind] if f in node), None)
                if entity is not None:
                    keep(entity, _value_in(node, parameter, about))
                for raw_id, value in node.items():  # keyed by id: {"16": {...}} or {"16": 45.2}
                    if normalise_id(kind, str(raw_id)) is not None:
                        direct = value if (parameter in (key, about)) else None
                        keep(
                            raw_id, _value_in(value, parameter, about) if isinstance(value, dict) else direct
                        )
            elif isinstance(node, list) and len(node) == 2 and (parameter in (key, about)):
                keep(node[0], node[1])  # [id, value] pairs
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
        for _, node in _walk(output.tree):
            if isinstance(node, list) and node and all(isinstance(i, str) for i in node):
                normal = [normalise_id(kind, i) for i in node]
                if all(n is not None for n in normal):
                    lists.append({n for n in normal if n is not None})
    return lists


def _pairs(seen: list[Seen]) -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for output in seen:
        for key, node in _walk(output.tree):
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
    if truth.kind == "refusal":
        numbers = seen_numbers(seen)
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
        numbers = seen_numbers(seen)
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
    values = records(seen, selection.parameter, kind)
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
