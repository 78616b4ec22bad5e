"""Current calibrated state: the small ``qubit`` and ``coupling`` collections.

These answer "what is the value now" without touching the (large) run history. Upstream databases
may hold several documents per (chip, qid) because their unique key includes ``username``; we keep
the most recently updated one (``system_info.updated_at``). Upstream's seed import stores qubit ``"Q05"``
as ``"05"`` (read as ``"5"``), and upstream creates both directions of every coupling (``"0-1"``
and ``"1-0"``) while only the calibrated one gets data: an empty direction whose reverse exists is
left out, so a pair is listed once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import invalid_reason, parameter_runs, producing_runs
from qdash.repositories.upstream_values import EPOCH, canonical_qid, stored_qid_spellings

QUBIT = "qubit"
COUPLING = "coupling"


def _updated_at(doc: Doc) -> datetime:
    info = doc.get("system_info") or {}
    value = info.get("updated_at") if isinstance(info, dict) else None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return EPOCH


def _newest_per_qid(docs: Iterable[Doc]) -> dict[str, Doc]:
    newest: dict[str, Doc] = {}
    for doc in docs:
        qid = canonical_qid(doc.get("qid", ""))
        if qid != doc.get("qid"):
            doc["qid"] = qid
        if qid not in newest or _updated_at(doc) > _updated_at(newest[qid]):
            newest[qid] = doc
    return newest


def _one_per_pair(couplings: dict[str, Doc]) -> dict[str, Doc]:
    """Drop a coupling direction without data when the reverse direction exists (with data, or,
    when neither has any, the one listed in ascending order is kept)."""
    kept: dict[str, Doc] = {}
    for qid, doc in couplings.items():
        first, sep, second = qid.partition("-")
        reverse = couplings.get(f"{second}-{first}") if sep and first != second else None
        descending = first.isdigit() and second.isdigit() and int(first) > int(second)
        if reverse is not None and not doc.get("data") and (bool(reverse.get("data")) or descending):
            continue
        kept[qid] = doc
    return kept


def get_qubit(scope: ProjectScope, chip_id: str, qid: str) -> Doc | None:
    """One qubit's current document, or ``None``: our spelling by equality (an index on MongoDB, an
    equality map on the embedded store), the seed import's (``"05"``, ``"Q05"``) only when absent."""
    found = scope.find(QUBIT, {"chip_id": chip_id, "qid": qid})
    if not found:
        found = scope.find(QUBIT, {"chip_id": chip_id, "qid": {"$in": stored_qid_spellings([qid])[1:]}})
    return _newest_per_qid(found).get(qid)


def _list(
    scope: ProjectScope,
    collection: str,
    chip_id: str,
    qids: list[str] | None,
    projection: dict[str, Any] | None,
) -> dict[str, Doc]:
    query: Doc = {"chip_id": chip_id}
    if qids is not None:
        query["qid"] = {"$in": stored_qid_spellings(qids)}
    if projection is not None:
        projection = {**projection, "qid": 1, "system_info.updated_at": 1}
    found = _newest_per_qid(scope.find(collection, query, projection))
    if qids is not None:
        found = {qid: doc for qid, doc in found.items() if qid in qids}
    return _one_per_pair(found) if collection == COUPLING else found


def list_qubits(
    scope: ProjectScope,
    chip_id: str,
    qids: list[str] | None = None,
    projection: dict[str, Any] | None = None,
) -> dict[str, Doc]:
    """Current documents of all (or the given) qubits of a chip, keyed by qid; one query."""
    return _list(scope, QUBIT, chip_id, qids, projection)


def list_couplings(
    scope: ProjectScope,
    chip_id: str,
    coupling_ids: list[str] | None = None,
    projection: dict[str, Any] | None = None,
) -> dict[str, Doc]:
    """Current coupling documents (all, or these ids in any order), keyed by coupling id; a pair's
    empty direction is left out when the other exists (see the module docstring)."""
    return _list(scope, COUPLING, chip_id, coupling_ids, projection)


def saved_parameter_names(scope: ProjectScope, chip_id: str, qids: list[str] | None = None) -> set[str]:
    """Every parameter saved to the chip's qubits and couplings (or to these ids): ``data`` keys.

    Each saved output lands in ``data`` and is never removed, so this answers from a few hundred
    small documents (one for a qid) instead of a ``distinct`` over the run history (measured on the
    small demo: 157 ms vs 1.4 s embedded for the chip; on MongoDB that ``distinct`` walks every
    index key of the chip, millions at lab scale).
    """
    query: Doc = {"chip_id": chip_id}
    if qids is not None:
        query["qid"] = {"$in": stored_qid_spellings(qids)}
    collections: tuple[str, ...] = (QUBIT, COUPLING)
    if qids is not None:
        collections = (COUPLING,) if any("-" in q for q in qids) else (QUBIT,)
    names: set[str] = set()
    for collection in collections:
        for doc in scope.find(collection, query, {"data": 1}):
            names.update(str(key) for key in (doc.get("data") or {}))
    return names


@dataclass(frozen=True)
class Superseded:
    """A current value that a failed run or a run a person excluded wrote, and the value to use.

    Upstream's executor never saves a run that fails its R² check (it clears the outputs first), and
    excluding a run upstream does not change ``data``; a lab's documents can still hold such a value
    (older releases, imports, exclusions after the save), so readers mark it instead of trusting it.
    """

    why: str
    """``"failed: R² value too low (0.27 < 0.70)"``, ``"excluded: bad fit"``."""
    last_good: Doc | None
    """The newest completed, non-excluded run of the same id that output the parameter, or ``None``."""


def superseded_values(
    scope: ProjectScope, chip_id: str, docs: Mapping[str, Doc], names: Iterable[str] | None = None
) -> dict[tuple[str, str], Superseded]:
    """``(id, parameter)`` of every current value in ``docs`` (id → current-state document; only
    ``names`` when given) whose producing run (``data.<parameter>.task_id``) did not complete or was
    excluded, with its last good run.

    One point read per producing run (a few hundred for a chip's every parameter: measured 1,057
    values of the small embedded demo in ~190 ms) and one indexed newest-first read per flagged value.
    """
    wanted = None if names is None else set(names)
    producers: dict[tuple[str, str], str] = {}
    for target, doc in docs.items():
        for name, param in (doc.get("data") or {}).items():
            if (wanted is None or name in wanted) and isinstance(param, Mapping) and param.get("task_id"):
                producers[(target, name)] = str(param["task_id"])
    runs = producing_runs(scope, producers.values())
    found: dict[tuple[str, str], Superseded] = {}
    for (target, name), task in producers.items():
        if (run := runs.get(task)) is None or (why := invalid_reason(run)) is None:
            continue
        first, _, second = target.partition("-")
        spellings = [target, f"{second}-{first}"] if second else [target]
        good = parameter_runs(scope, chip_id, name, spellings, 1)
        found[(target, name)] = Superseded(why, good[0] if good else None)
    return found


def ids_by_parameter(
    scope: ProjectScope, chip_id: str, parameter_names: Iterable[str]
) -> dict[str, list[str]]:
    """For each parameter, the qubit or coupling ids whose current state holds it (numeric order).

    Why: the chip-wide history reads need the ids to ask for, one bounded range per id; the small
    current-state collections say which ids a parameter exists for (two queries for the whole chip).
    """
    names = list(dict.fromkeys(parameter_names))
    projection = {f"data.{name}.value": 1 for name in names}
    found: dict[str, list[str]] = {name: [] for name in names}
    for docs in (
        list_qubits(scope, chip_id, None, projection),
        list_couplings(scope, chip_id, None, projection),
    ):
        for qid, doc in docs.items():
            for name in (doc.get("data") or {}).keys() & found.keys():
                found[name].append(qid)
    return {name: sorted(ids, key=_id_order) for name, ids in found.items() if ids}


def _id_order(qid: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else -1 for part in qid.split("-"))
