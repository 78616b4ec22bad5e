"""Current qubit and coupling parameters: ``get_qubit_params``, ``compare_qubits``,
``get_coupling_params``.

All three read the small current-state collections (``qubit``/``coupling``) with one query each;
values are the ones saved last, which upstream also saves from failed fits.
"""

from __future__ import annotations

from typing import Any

from qdash.copilot.tools.catalog.args import (
    ChipId,
    OptCouplingId,
    OptQid,
    ParamNames,
    Qid,
    Qids,
    ToolArgs,
)
from qdash.copilot.tools.catalog.chip import current_projection, current_sections
from qdash.copilot.tools.catalog.common import (
    empty_result,
    excluded_note,
    resolve_chip,
    scope_of,
    time_format,
)
from qdash.copilot.tools.catalog.formatting import (
    compact_parameters,
    finite,
    parameter_times,
    qid_sort_key,
    scaled,
)
from qdash.copilot.tools.catalog.identifiers import both_orders
from qdash.copilot.tools.catalog.overview import graded_parameters
from qdash.copilot.tools.catalog.topology import chip_topology
from qdash.copilot.tools.spec import ToolContext, ToolError, tool
from qdash.repositories.current_state import excluded_values, get_qubit, list_couplings, list_qubits
from qdash.repositories.scope import ProjectScope
from qdash.units import shown_unit


class QubitParamsArgs(ToolArgs):
    chip_id: ChipId = None
    qid: Qid


@tool(label="Fetching qubit parameters")
def get_qubit_params(ctx: ToolContext, args: QubitParamsArgs) -> dict[str, Any]:
    """A qubit's current parameters, graded → {status,params}

    Current parameters of one qubit as ``cp`` entries.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    doc = get_qubit(scope, chip, args.qid)
    if doc is None:
        raise ToolError(f"Qubit {args.qid} not found (chip_id={chip})", "list qubits with get_chip_summary")
    data = doc.get("data") or {}
    times = time_format(ctx, parameter_times(data))
    excluded = excluded_values(scope, data)
    return {
        "chip_id": chip,
        "qid": args.qid,
        "status": doc.get("status"),
        "params": _marked(compact_parameters(data, times, scoring=ctx.settings.scoring), excluded),
        **excluded_note(len(excluded)),
    }


def _marked(params: dict[str, dict[str, Any]], excluded: list[str]) -> dict[str, dict[str, Any]]:
    """``excluded: true`` on current values whose run a person excluded from metrics upstream."""
    for name in excluded:
        if name in params:
            params[name]["excluded"] = True
    return params


class CompareQubitsArgs(ToolArgs):
    chip_id: ChipId = None
    qids: Qids
    param_names: ParamNames = None


@tool(label="Comparing qubits")
def compare_qubits(ctx: ToolContext, args: CompareQubitsArgs) -> dict[str, Any]:
    """Current values of several qubits → {grades,thresholds,not_found}

    One row per qubit, one column per parameter, units hoisted, qubits graded against the scoring
    thresholds; one ``$in`` query. A value whose run a person excluded from metrics upstream is left
    out (``null``, not graded) and counted.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    wanted = list(dict.fromkeys(args.qids))
    projection = None if args.param_names is None else {f"data.{p}": 1 for p in args.param_names}
    found = list_qubits(scope, chip, wanted, projection)
    not_found = [q for q in wanted if q not in found]
    if not found:
        raise ToolError(f"Qubit {', '.join(not_found)} not found (chip_id={chip})")
    units: dict[str, tuple[float, str]] = {}
    for qid in wanted:
        for name, param in (found.get(qid, {}).get("data") or {}).items():
            if isinstance(param, dict) and (args.param_names is None or name in args.param_names):
                units.setdefault(name, shown_unit(name, param.get("unit")))
    names = list(args.param_names) if args.param_names is not None else sorted(units)
    rows = []
    values: dict[str, dict[str, float]] = {name: {} for name in names}
    left_out = 0
    for qid in sorted(found, key=qid_sort_key):
        data = found[qid].get("data") or {}
        excluded = set(excluded_values(scope, {name: data[name] for name in names if name in data}))
        left_out += len(excluded)
        for name in names:
            if name in excluded:
                continue
            if (value := finite((data.get(name) or {}).get("value"))) is not None:
                values[name][qid] = value
        rows.append([qid, *[scaled(values[name].get(qid), units.get(name, (1.0, ""))[0]) for name in names]])
    return {
        "chip_id": chip,
        "units": {name: units.get(name, (1.0, ""))[1] for name in names},
        "cols": ["qid", *names],
        "rows": rows,
        **graded_parameters(values, ctx.settings.scoring),
        "not_found": not_found,
        **excluded_note(left_out),
    }


class CouplingParamsArgs(ToolArgs):
    chip_id: ChipId = None
    coupling_id: OptCouplingId = None
    qubit_id: OptQid = None
    param_names: ParamNames = None


@tool(label="Fetching coupling parameters")
def get_coupling_params(ctx: ToolContext, args: CouplingParamsArgs) -> dict[str, Any]:
    """Current parameters of coupling_id or of qubit_id's couplings → {couplings}; neither: all
    couplings, graded and tabled as get_chip_summary

    Current coupling parameters by coupling id (either order), by qubit (its neighbours), or every
    coupling of the chip graded and tabled like ``get_chip_summary`` (one parameter: the table is
    ranked best first).
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    if args.coupling_id is None and args.qubit_id is None:
        return _chip_couplings(ctx, scope, chip, args.param_names)
    if args.coupling_id is not None:
        ids = both_orders(args.coupling_id)
    else:
        _, topology = chip_topology(ctx, scope, chip)
        qubit = int(str(args.qubit_id))
        if qubit not in topology.qubits:
            raise ToolError("Invalid qubit_id", f"qubits of {chip} are 0..{topology.num_qubits - 1}")
        listed = [cid for cid in topology.coupling_ids if qubit in map(int, cid.split("-"))]
        ids = [spelling for cid in listed for spelling in both_orders(cid)]
    docs = list_couplings(scope, chip, ids)
    if not docs:
        return empty_result({"chip_id": chip, "coupling_id": args.coupling_id, "qubit_id": args.qubit_id})
    moments = [t for doc in docs.values() for t in parameter_times(doc.get("data"))]
    times = time_format(ctx, moments)
    couplings = []
    marked = 0
    for cid in sorted(docs, key=qid_sort_key):
        excluded = excluded_values(scope, docs[cid].get("data"))
        data = _marked(
            compact_parameters(docs[cid].get("data"), times, args.param_names, scoring=ctx.settings.scoring),
            excluded,
        )
        marked += sum(name in data for name in excluded)
        couplings.append({"coupling_id": cid, "data": data})
    return {"chip_id": chip, "couplings": couplings, **excluded_note(marked)}


def _chip_couplings(
    ctx: ToolContext, scope: ProjectScope, chip: str, param_names: list[str] | None
) -> dict[str, Any]:
    """Every coupling of the chip: statistics, grades and a table (or extremes), values from runs a
    person excluded left out and counted; with one parameter the table is ranked best first (by the
    lab's threshold direction, highest first without one)."""
    docs = list_couplings(scope, chip, None, current_projection(param_names))
    if not docs:
        return empty_result({"chip_id": chip, "param_names": param_names})
    sections, _, excluded = current_sections(ctx, scope, docs, "coupling_id")
    table = sections.get("table")
    if param_names is not None and len(param_names) == 1 and table is not None and len(table["cols"]) == 2:
        threshold = ctx.settings.scoring.get(param_names[0])
        lower_first = threshold is not None and not threshold.higher_is_better
        known = [row for row in table["rows"] if row[1] is not None]
        known.sort(key=lambda row: row[1], reverse=not lower_first)
        table["rows"] = known + [row for row in table["rows"] if row[1] is None]
        sections["ranked_by"] = param_names[0]
    return {"chip_id": chip, "num_couplings": len(docs), **sections, **excluded_note(excluded)}
