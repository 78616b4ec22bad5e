"""Where values come from: ``get_calibration_notes``, ``get_parameter_lineage``,
``get_provenance_lineage_graph``.

Lineage rows carry ``entity_id`` (upstream dropped it), which is exactly what the graph tool takes,
so the model can go from "how did T1 change" to "what was it derived from" in two calls.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import Field

from qdash.copilot.tools.catalog.args import (
    ChipId,
    EntityId,
    OptTarget,
    OptText,
    ParameterName,
    Target,
    ToolArgs,
)
from qdash.copilot.tools.catalog.common import context_text, resolve_chip, scope_of, time_format
from qdash.copilot.tools.catalog.formatting import TimeFormat, columnar, normalize_unit, sig4
from qdash.copilot.tools.catalog.identifiers import both_orders, normalize_target, qids_of
from qdash.copilot.tools.catalog.lineage_graph import walk
from qdash.copilot.tools.spec import ToolContext, ToolError, ToolSpec
from qdash.repositories import notes, provenance
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.upstream_values import lab_moment

ENTITY_FORMAT = "parameter_name:qid:execution_id:task_id"


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
    found = notes.user_notes(
        scope, chip, args.execution_id, args.task_id, limit=50 if args.qid else args.last_n
    )
    if args.qid is not None:
        wanted = both_orders(args.qid)
        found = [doc for doc in found if str(doc.get("qid")) in wanted]
    return found[: args.last_n]


def get_calibration_notes(ctx: ToolContext, args: NotesArgs) -> dict[str, Any]:
    """Newest machine notes, optionally only the entries of one qubit or coupling, and the
    dashboard's notes on task results."""
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
        where = context_text(chip_id=chip, execution_id=args.execution_id, task_id=args.task_id, qid=args.qid)
        raise ToolError(f"No calibration notes found {where}")
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


class LineageArgs(ToolArgs):
    parameter_name: ParameterName
    qid: Target
    chip_id: ChipId = None
    last_n: int = Field(10, ge=1, le=50)


def get_parameter_lineage(ctx: ToolContext, args: LineageArgs) -> dict[str, Any]:
    """Version history of one parameter, newest first, with the ``entity_id`` of each version."""
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    param = args.parameter_name
    versions = provenance.version_history(scope, chip, param, both_orders(args.qid), args.last_n)
    if not versions:
        raise ToolError(
            f"No parameter versions found for '{param}' on qid={args.qid}",
            "list_available_parameters shows which parameters exist",
        )
    times = time_format(ctx, [v.get(k) for v in versions for k in ("valid_from", "valid_until")])
    cols = [
        "version", "value", "error", "execution_id", "task_name", "valid_from", "valid_until", "entity_id",
    ]  # fmt: skip
    rows = [
        [
            v.get("version"),
            sig4(v.get("value")) if isinstance(v.get("value"), int | float) else v.get("value"),
            sig4(v.get("error")) or None,
            v.get("execution_id"),
            v.get("task_name"),
            times(v.get("valid_from")),
            times(v.get("valid_until")),
            v.get("entity_id"),
        ]
        for v in versions
    ]
    unit = normalize_unit(versions[0].get("unit"))
    return {"parameter_name": param, "qid": args.qid, "unit": unit, **columnar(cols, rows, keep=cols)}


class GraphArgs(ToolArgs):
    entity_id: EntityId = Field(description=f"'{ENTITY_FORMAT}'")
    chip_id: ChipId = Field(None, description="null = any")
    max_depth: int = Field(5, ge=1, le=20)


NODE_FIELDS = ("param", "qid", "value", "unit", "ver", "task", "exec_id", "valid_from", "status")


def _node(kind: str, node_id: str, depth: int, **fields: Any) -> dict[str, Any]:
    """Uniform node: every key present (null when unknown), so rows compact into columns."""
    return {"type": kind, "id": node_id, "depth": depth, **{k: fields.get(k) for k in NODE_FIELDS}}


def _entity_node(
    entity_id: str, depth: int, version: Doc | None, latest: dict[tuple[str, str], int], times: TimeFormat
) -> dict[str, Any]:
    if version is None:
        param, qid = entity_id.split(":")[:2]
        return _node("entity", entity_id, depth, param=param, qid=qid)
    number = version.get("version")
    newest = latest.get((str(version.get("parameter_name")), str(version.get("qid"))))
    ver = None if number is None else str(number) if newest in (None, number) else f"{number}/{newest}"
    value = version.get("value")
    return _node(
        "entity",
        entity_id,
        depth,
        param=version.get("parameter_name"),
        qid=version.get("qid"),
        value=sig4(value) if isinstance(value, int | float) else value,
        unit=normalize_unit(version.get("unit")),
        ver=ver,
        task=version.get("task_name"),
        exec_id=version.get("execution_id"),
        valid_from=times(version.get("valid_from")),
        status="current" if version.get("valid_until") is None else "superseded",
    )


def _activity_node(activity_id: str, depth: int, activity: Doc | None, times: TimeFormat) -> dict[str, Any]:
    found = activity or {}
    return _node(
        "activity",
        activity_id,
        depth,
        qid=found.get("qid"),
        task=found.get("task_name"),
        exec_id=found.get("execution_id"),
        valid_from=times(found.get("started_at")),
        status=found.get("status"),
    )


def get_provenance_lineage_graph(ctx: ToolContext, args: GraphArgs) -> dict[str, Any]:
    """Ancestry DAG of one parameter version: what it was generated by and derived from."""
    if args.entity_id.count(":") != 3:
        hint = "copy entity_id from get_parameter_lineage"
        raise ToolError(f"Invalid entity_id format: expected '{ENTITY_FORMAT}'", hint)
    scope = scope_of(ctx)
    origin = provenance.versions_by_entity(scope, [args.entity_id]).get(args.entity_id)
    if origin is None or (args.chip_id is not None and origin.get("chip_id") != args.chip_id):
        where = context_text(entity_id=args.entity_id, chip_id=args.chip_id)
        raise ToolError(f"Entity not found {where}: the chip or this parameter version may not exist")
    graph = walk(scope, args.entity_id, args.max_depth)
    entities, activities = graph.entities, graph.activities
    versions = provenance.versions_by_entity(scope, list(entities))
    keys = {(str(v.get("parameter_name")), str(v.get("qid"))) for v in versions.values()}
    latest = provenance.latest_versions(scope, str(origin.get("chip_id")), keys)
    found_activities = provenance.activities_by_id(scope, list(activities))
    moments = [v.get("valid_from") for v in versions.values()]
    moments += [a.get("started_at") for a in found_activities.values()]
    times = time_format(ctx, moments)
    nodes = [_entity_node(eid, d, versions.get(eid), latest, times) for eid, d in entities.items()]
    nodes += [_activity_node(aid, d, found_activities.get(aid), times) for aid, d in activities.items()]
    known = set(entities) | set(activities)
    kept_edges = [
        {"relation": relation, "source": source, "target": target}
        for relation, source, target in graph.edges
        if source in known and target in known
    ]
    result: dict[str, Any] = {
        "origin": args.entity_id,
        "num_nodes": len(nodes),
        "num_edges": len(kept_edges),
        "max_depth": args.max_depth,
        "nodes": nodes,
        "edges": kept_edges,
    }
    if graph.truncated:
        result["truncated"] = True
    return result


SPECS = [
    ToolSpec(
        name="get_calibration_notes",
        description="Calibration backend's machine notes per execution (e.g. drag_pi_params, cr_params) "
        "and people's notes on task results → {chip_id,note_keys{key:labels},notes[{execution_id,"
        "task_id,version,timestamp,note}],user_notes[{task_id,task_name,qid,execution_id,content,by,at}]}",
        args_model=NotesArgs,
        label="Fetching calibration notes",
        store_key="calibration_notes",
    ),
    ToolSpec(
        name="get_parameter_lineage",
        description="Version history of one parameter on a qid, newest first → {parameter_name,qid,unit,"
        "cols[version,value,error,execution_id,task_name,valid_from,valid_until (null = "
        "current),entity_id],rows}",
        args_model=LineageArgs,
        label="Fetching parameter lineage",
    ),
    ToolSpec(
        name="get_provenance_lineage_graph",
        description="Recursive ancestry of a parameter version → {origin,num_nodes,num_edges,max_depth,"
        "nodes[{type,id,depth,param,qid,value,unit,ver,task,exec_id,valid_from,status}],"
        "edges[{relation,source,target}]}; ver = version/latest",
        args_model=GraphArgs,
        label="Fetching provenance lineage graph",
    ),
]
IMPLEMENTATIONS = {
    "get_calibration_notes": get_calibration_notes,
    "get_parameter_lineage": get_parameter_lineage,
    "get_provenance_lineage_graph": get_provenance_lineage_graph,
}
