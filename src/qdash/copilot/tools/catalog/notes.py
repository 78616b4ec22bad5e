"""``get_calibration_notes``: the calibration backend's machine notes per execution, and people's
notes on task results (upstream's ``user_note``).

A whole-chip note holds every qubit's and coupling's entry (18 KB on a 64-qubit chip), more than one
tool result may carry. The generic size guard would then drop whole notes; this tool's own ``shrink``
keeps every note and cuts each to its share of the cap: the first labels of each note key in qid
order, with ``"_more"`` counting the labels left out (all of them are in the data store).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import Field

from qdash.copilot.tools.catalog.args import ChipId, OptTarget, OptText, ToolArgs
from qdash.copilot.tools.catalog.common import empty_result, resolve_chip, scope_of, time_format
from qdash.copilot.tools.catalog.formatting import TimeFormat
from qdash.copilot.tools.catalog.identifiers import both_orders, normalize_target, qids_of
from qdash.copilot.tools.jsonsafe import dumps
from qdash.copilot.tools.spec import ToolContext, tool
from qdash.repositories import notes
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.upstream_values import lab_moment

MIN_SHARE = 400
"""Characters each note keeps at least, however many notes share the cap."""
RESERVE = 400
"""Characters of the cap kept for the ``_truncated`` note and the other fields' growth."""


class NotesArgs(ToolArgs):
    chip_id: ChipId = None
    execution_id: OptText = None
    task_id: OptText = None
    qid: OptTarget = None
    last_n: int = Field(3, ge=1, le=10)


def _label_matches(label: str, target: str) -> bool:
    try:
        labelled = normalize_target(label)
    except ValueError:
        return False
    if "-" in target:
        return labelled in both_orders(target)
    return target in qids_of(labelled)


def _filter_note(note: dict[str, Any], target: str) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, entries in note.items():
        if isinstance(entries, dict):
            matching = {label: v for label, v in entries.items() if _label_matches(str(label), target)}
            if matching:
                kept[key] = matching
    return kept


def _entry_times(note: dict[str, Any], lab_zone: ZoneInfo) -> list[datetime]:
    """The moments of a Qubex note's entries (``{key: {label: {…, "timestamp": str}}}``)."""
    moments = []
    for entries in note.values():
        for entry in entries.values() if isinstance(entries, dict) else ():
            if isinstance(entry, dict) and (moment := lab_moment(entry.get("timestamp"), lab_zone)):
                moments.append(moment)
    return moments


def _localised(note: dict[str, Any], lab_zone: ZoneInfo, times: TimeFormat) -> dict[str, Any]:
    """The note with each entry's naive lab-local ``timestamp`` shown in the display timezone."""
    shown: dict[str, Any] = {}
    for key, entries in note.items():
        if not isinstance(entries, dict):
            shown[key] = entries
            continue
        shown[key] = {}
        for label, entry in entries.items():
            moment = lab_moment(entry.get("timestamp"), lab_zone) if isinstance(entry, dict) else None
            shown[key][label] = entry if moment is None else {**entry, "timestamp": times(moment)}
    return shown


def _user_notes(scope: ProjectScope, chip: str, args: NotesArgs) -> list[Doc]:
    """Dashboard notes on task results (upstream's ``user_note``), of the qid when one is given."""
    found = notes.user_notes(scope, chip, args.execution_id, args.task_id, executions=args.last_n)
    if args.qid is not None:
        wanted = both_orders(args.qid)
        found = [doc for doc in found if str(doc.get("qid")) in wanted]
    return found[: args.last_n]


def cut_notes(work: dict[str, Any], cap: int, data_key: str | None) -> dict[str, Any] | None:
    """The size guard's first step for this tool: every note cut to an equal share of ``cap``."""
    shown = work.get("notes")
    if not isinstance(shown, list) or not shown:
        return None
    others = len(dumps({key: value for key, value in work.items() if key != "notes"}))
    share = max(MIN_SHARE, (cap - others - RESERVE) // len(shown))
    cut = False
    for entry in shown:
        note = entry.get("note") if isinstance(entry, dict) else None
        if isinstance(note, dict) and len(dumps(note)) > share:
            entry["note"] = _first_labels(note, share)
            cut = True
    if not cut:
        return None
    return {
        "field": "notes.note",
        "kept": "first labels of each note key; _more counts the rest",
        "data_key": data_key,
        "hint": "pass qid for one qubit's or coupling's entries",
    }


def _first_labels(note: dict[str, Any], share: int) -> dict[str, Any]:
    """Each key of ``note`` keeps its first labels within ``share / keys`` characters (at least one)."""
    per_key = share // max(1, len(note))
    kept: dict[str, Any] = {}
    more: dict[str, int] = {}
    for key, entries in note.items():
        if not isinstance(entries, dict):
            kept[key] = entries
            continue
        room = per_key
        part: dict[str, Any] = {}
        for label, value in sorted(entries.items(), key=lambda item: _label_order(str(item[0]))):
            size = len(dumps({label: value}))
            if part and size > room:
                break
            part[str(label)] = value
            room -= size
        kept[key] = part
        if len(part) < len(entries):
            more[key] = len(entries) - len(part)
    if more:
        kept["_more"] = more
    return kept


def _label_order(label: str) -> tuple[int, ...]:
    """``Q04-Q01`` → ``(4, 1)``: labels in qubit order, whatever their zero padding."""
    return tuple(int(number) for number in re.findall(r"\d+", label))


@tool(label="Fetching calibration notes", store_key="calibration_notes", shrink=cut_notes)
def get_calibration_notes(ctx: ToolContext, args: NotesArgs) -> dict[str, Any]:
    """Machine notes (drag_pi_params, cr_params…) per execution, keyed Q16 or Q16-Q22, and people's
    user_notes on task results → {note_keys,notes}

    Newest machine notes, optionally only the entries of one qubit or coupling, and the
    dashboard's notes on task results.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    lab_zone = ZoneInfo(ctx.settings.lab.timezone)
    picked: list[Doc] = []
    for doc in notes.iter_notes(scope, chip, args.execution_id, args.task_id):
        note = doc.get("note") or {}
        if args.qid is not None:
            note = _filter_note(note, args.qid)
            if not note:
                continue
        picked.append({**doc, "note": note})
        if len(picked) == args.last_n:
            break
    noted = _user_notes(scope, chip, args)
    if not picked and not noted:
        filters = {"execution_id": args.execution_id, "task_id": args.task_id, "qid": args.qid}
        return empty_result({"chip_id": chip, **filters})
    moments: list[object] = [doc.get("timestamp") for doc in picked]
    moments += [t for doc in picked for t in _entry_times(doc["note"], lab_zone)]
    moments += [doc["user_note"].get("updated_at") for doc in noted]
    times = time_format(ctx, moments)
    label_counts: dict[str, int] = {}
    for doc in picked:
        for key, entries in doc["note"].items():
            count = len(entries) if isinstance(entries, dict) else 1
            label_counts[key] = max(label_counts.get(key, 0), count)
    result: dict[str, Any] = {
        "chip_id": chip,
        "note_keys": label_counts,
        "notes": [
            {
                "execution_id": doc.get("execution_id"),
                "task_id": doc.get("task_id"),
                "version": doc.get("version"),
                "timestamp": times(doc.get("timestamp")),
                "note": _localised(doc["note"], lab_zone, times),
            }
            for doc in picked
        ],
    }
    if noted:
        result["user_notes"] = [
            {
                "task_id": doc.get("task_id"),
                "task_name": doc.get("name"),
                "qid": doc.get("qid"),
                "execution_id": doc.get("execution_id"),
                "content": doc["user_note"].get("content"),
                "by": doc["user_note"].get("updated_by") or None,
                "at": times(doc["user_note"].get("updated_at")),
            }
            for doc in noted
        ]
    return result
