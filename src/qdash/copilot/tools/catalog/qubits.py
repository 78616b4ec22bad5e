"""Current qubit and coupling parameters: ``get_qubit_params``, ``compare_qubits``,
``get_coupling_params``.

All three read the small current-state collections (``qubit``/``coupling``) with one query each;
values are the ones saved last. A value a failed or excluded run wrote (upstream's executor saves
neither, but a lab's documents may hold one) says so, with the last good value beside it.
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
from qdash.copilot.tools.catalog.chip import (
    current_projection,
    current_sections,
    flagged_values,
    use_last_good,
)
from qdash.copilot.tools.catalog.common import empty_result, resolve_chip, scope_of, time_format
from qdash.copilot.tools.catalog.formatting import (
    compact_parameter,
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
from qdash.repositories.current_state import (
    Superseded,
    get_qubit,
    list_couplings,
    list_qubits,
    superseded_values,
)
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
    superseded = {name: found for (_, name), found in superseded_values(scope, chip, {args.qid: doc}).items()}
    params = _validated(ctx, data, None, superseded)
    invalid = {"invalid": sorted(superseded)} if superseded else {}
    return {"chip_id": chip, "qid": args.qid, "status": doc.get("status"), "params": params, **invalid}


def _validated(
    ctx: ToolContext, data: dict[str, Any], names: list[str] | None, superseded: dict[str, Superseded]
) -> dict[str, dict[str, Any]]:
    """``cp`` entries of ``data``; one a failed or excluded run wrote carries ``invalid`` (why) and
    ``last_good`` (the newest value that passed, graded, with its time; null when none) instead of a
    grade."""
    good_runs = [found.last_good for found in superseded.values() if found.last_good is not None]
    moments = [*parameter_times(data), *(run.get("end_at") or run.get("start_at") for run in good_runs)]
    times = time_format(ctx, moments)
    scoring = ctx.settings.scoring
    params = compact_parameters(data, times, names, scoring=scoring)
    for name, found in superseded.items():
        if (entry := params.get(name)) is None:
            continue
        entry.pop("grade", None)
        entry["invalid"] = found.why
        entry["last_good"] = None
        run = found.last_good
        if run is not None and isinstance(body := (run.get("output_parameters") or {}).get(name), dict):
            at = run.get("end_at") or run.get("start_at")
            source = {**body, "calibrated_at": at, "execution_id": run.get("execution_id")}
            good = compact_parameter(name, source, times, threshold=scoring.get(name))
            entry["last_good"] = {k: v for k, v in good.items() if k not in ("unit", "error")}
    return params


class CompareQubitsArgs(ToolArgs):
    chip_id: ChipId = None
    qids: Qids
    param_names: ParamNames = None


@tool(label="Comparing qubits")
def compare_qubits(ctx: ToolContext, args: CompareQubitsArgs) -> dict[str, Any]:
    """Current values of several qubits → {grades,thresholds,not_found}

    One row per qubit, one column per parameter, units hoisted, qubits graded against the scoring
    thresholds; one ``$in`` query. A value a failed or excluded run wrote is replaced by its last
    good one (``flagged`` lists both).
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
    values: dict[str, dict[str, float]] = {name: {} for name in names}
    for qid in found:
        data = found[qid].get("data") or {}
        for name in names:
            if (value := finite((data.get(name) or {}).get("value"))) is not None:
                values[name][qid] = value
    superseded = superseded_values(scope, chip, found, names)
    use_last_good(values, superseded)
    unit_of = {name: units.get(name, (1.0, "")) for name in names}
    rows = [
        [qid, *[scaled(values[name].get(qid), *unit_of[name]) for name in names]]
        for qid in sorted(found, key=qid_sort_key)
    ]
    return {
        "chip_id": chip,
        "units": {name: unit_of[name][1] for name in names},
        "cols": ["qid", *names],
        "rows": rows,
        **graded_parameters(values, ctx.settings.scoring),
        "not_found": not_found,
        **({"flagged": flagged_values(ctx, "qid", found, superseded)} if superseded else {}),
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
    superseded = superseded_values(scope, chip, docs, args.param_names)
    couplings = []
    for cid in sorted(docs, key=qid_sort_key):
        mine = {name: found for (key, name), found in superseded.items() if key == cid}
        data = _validated(ctx, docs[cid].get("data") or {}, args.param_names, mine)
        couplings.append({"coupling_id": cid, "data": data})
    return {"chip_id": chip, "couplings": couplings}


def _chip_couplings(
    ctx: ToolContext, scope: ProjectScope, chip: str, param_names: list[str] | None
) -> dict[str, Any]:
    """Every coupling of the chip: statistics, grades and a table (or extremes) as
    :func:`current_sections` gives them; with one parameter the table is ranked best first (by the
    lab's threshold direction, highest first without one)."""
    docs = list_couplings(scope, chip, None, current_projection(param_names))
    if not docs:
        return empty_result({"chip_id": chip, "param_names": param_names})
    sections, _ = current_sections(ctx, scope, chip, docs, "coupling_id")
    table = sections.get("table")
    if param_names is not None and len(param_names) == 1 and table is not None and len(table["cols"]) == 2:
        threshold = ctx.settings.scoring.get(param_names[0])
        lower_first = threshold is not None and not threshold.higher_is_better
        known = [row for row in table["rows"] if row[1] is not None]
        known.sort(key=lambda row: row[1], reverse=not lower_first)
        table["rows"] = known + [row for row in table["rows"] if row[1] is None]
        sections["ranked_by"] = param_names[0]
    return {"chip_id": chip, "num_couplings": len(docs), **sections}
