"""Where values come from: ``get_parameter_lineage``, ``get_provenance_lineage_graph``.

Lineage rows carry ``entity_id`` (upstream dropped it), which is exactly what the graph tool takes,
so the model can go from "how did T1 change" to "what was it derived from" in two calls.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from qdash.copilot.tools.catalog.args import (
    ChipId,
    EntityId,
    ParameterName,
    Target,
    ToolArgs,
)
from qdash.copilot.tools.catalog.common import (
    PARAMETERS_HINT,
    context_text,
    empty_result,
    excluded_note,
    resolve_chip,
    scope_of,
    time_format,
)
from qdash.copilot.tools.catalog.formatting import TimeFormat, columnar, scaled
from qdash.copilot.tools.catalog.identifiers import both_orders
from qdash.copilot.tools.catalog.lineage_graph import walk
from qdash.copilot.tools.spec import ToolContext, ToolError, tool
from qdash.repositories import provenance
from qdash.repositories.scope import Doc
from qdash.repositories.task_results import excluded_task_ids
from qdash.units import shown_unit

ENTITY_FORMAT = "parameter_name:qid:execution_id:task_id"


class LineageArgs(ToolArgs):
    parameter_name: ParameterName
    qid: Target
    chip_id: ChipId = None
    last_n: int = Field(10, ge=1, le=50)


@tool(label="Fetching parameter lineage")
def get_parameter_lineage(ctx: ToolContext, args: LineageArgs) -> dict[str, Any]:
    """Version history of one parameter on a qid, newest first; entity_id feeds
    get_provenance_lineage_graph

    Version history of one parameter, newest first, with the ``entity_id`` of each version; a
    version whose run a person excluded from metrics upstream is marked (provenance keeps it).
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    param = args.parameter_name
    versions = provenance.version_history(scope, chip, param, both_orders(args.qid), args.last_n)
    if not versions:
        filters = {"parameter_name": param, "qid": args.qid, "chip_id": chip}
        return empty_result(filters, hint=PARAMETERS_HINT)
    times = time_format(ctx, [v.get(k) for v in versions for k in ("valid_from", "valid_until")])
    excluded = excluded_task_ids(scope, (str(v.get("task_id") or "") for v in versions))
    cols = [
        "version", "value", "error", "execution_id", "task_name", "valid_from", "valid_until", "entity_id",
        "excluded",
    ]  # fmt: skip
    scale, unit = shown_unit(param, versions[0].get("unit"))
    rows = [
        [
            v.get("version"),
            scaled(v.get("value"), scale) if isinstance(v.get("value"), int | float) else v.get("value"),
            scaled(v.get("error"), scale) or None,
            v.get("execution_id"),
            v.get("task_name"),
            times(v.get("valid_from")),
            times(v.get("valid_until")),
            v.get("entity_id"),
            True if v.get("task_id") in excluded else None,
        ]
        for v in versions
    ]
    table = columnar(cols, rows, keep=cols[:-1])
    marked = sum(v.get("task_id") in excluded for v in versions)
    return {"parameter_name": param, "qid": args.qid, "unit": unit, **table, **excluded_note(marked)}


class GraphArgs(ToolArgs):
    entity_id: EntityId  # from get_parameter_lineage's rows; a malformed one is refused with the format
    chip_id: ChipId = None
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
    scale, unit = shown_unit(str(version.get("parameter_name")), version.get("unit"))
    return _node(
        "entity",
        entity_id,
        depth,
        param=version.get("parameter_name"),
        qid=version.get("qid"),
        value=scaled(value, scale) if isinstance(value, int | float) else value,
        unit=unit,
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


@tool(label="Fetching provenance lineage graph")
def get_provenance_lineage_graph(ctx: ToolContext, args: GraphArgs) -> dict[str, Any]:
    """Ancestry of a parameter version → {origin,num_nodes,num_edges,nodes,edges}

    Ancestry DAG of one parameter version: what it was generated by and derived from.
    """
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
