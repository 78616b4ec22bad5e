"""Parameter versions and the PROV graph (``parameter_versions``, ``provenance_relations``,
``provenance_activities``).

Graph reads go by natural key (``entity_id``, ``activity_id``, ``relation_id``) through
:meth:`ProjectScope.find_keys`, so a walk costs point reads, not collection scans, on both stores;
:func:`relations_from` is the fallback for relations whose ids cannot be derived.
"""

from __future__ import annotations

from collections.abc import Iterable

from qdash.repositories.current_state import list_couplings, list_qubits
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.upstream_values import EPOCH, as_utc, canonical_qid, stored_qid_spellings

VERSIONS = "parameter_versions"
RELATIONS = "provenance_relations"
ACTIVITIES = "provenance_activities"


def version_history(
    scope: ProjectScope, chip_id: str, parameter_name: str, qids: list[str], limit: int
) -> list[Doc]:
    """Newest versions of one parameter on one qid (``qids`` = spellings of the same id), with
    ``qid`` in our form even when a version was imported under a Qubex label (``"Q40"``)."""
    newest = [("version", -1)]
    versions = []
    for spelling in stored_qid_spellings(qids):  # equalities: index- and equality-map-served
        query = {"chip_id": chip_id, "parameter_name": parameter_name, "qid": spelling}
        versions += scope.find(VERSIONS, query, sort=newest, limit=limit)
    versions.sort(key=lambda version: as_utc(version.get("valid_from")) or EPOCH, reverse=True)
    for version in versions[:limit]:
        version["qid"] = canonical_qid(version.get("qid"))
    return versions[:limit]


def versions_by_entity(scope: ProjectScope, entity_ids: Iterable[str]) -> dict[str, Doc]:
    """Parameter versions keyed by ``entity_id`` (``qid`` in our form, see :func:`canonical_qid`)."""
    found = scope.find_keys(VERSIONS, "entity_id", entity_ids)
    for version in found.values():
        version["qid"] = canonical_qid(version.get("qid"))
    return found


def latest_versions(
    scope: ProjectScope, chip_id: str, keys: set[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """Latest version number per (parameter, qid).

    The latest version is the value now in ``qubit``/``coupling`` ``data`` (a version is written for
    every saved value), whose producer names its entity; reading the small current-state collections
    plus point reads avoids querying the large version collection for ``valid_until: null``.
    """
    params = sorted({param for param, _ in keys})
    projection = {f"data.{p}.{field}": 1 for p in params for field in ("execution_id", "task_id")}
    qubits = sorted({qid for _, qid in keys if "-" not in qid})
    couplings = sorted({qid for _, qid in keys if "-" in qid})
    current = {}
    if qubits:
        current.update(list_qubits(scope, chip_id, qubits, projection))
    if couplings:
        current.update(list_couplings(scope, chip_id, couplings, projection))
    entities: dict[str, tuple[str, str]] = {}
    for param, qid in keys:
        saved = ((current.get(qid) or {}).get("data") or {}).get(param) or {}
        if saved.get("execution_id") and saved.get("task_id"):
            entities[f"{param}:{qid}:{saved['execution_id']}:{saved['task_id']}"] = (param, qid)
    found = versions_by_entity(scope, entities)
    return {entities[eid]: int(doc["version"]) for eid, doc in found.items() if "version" in doc}


def relations_by_id(scope: ProjectScope, relation_ids: Iterable[str]) -> set[str]:
    """Which of these relation ids exist as ``_id`` (our documents; no fallback scan: absent ids are
    normal here, and upstream's relations, with ObjectId ``_id``s, are found by
    :func:`relations_from`)."""
    return set(scope.find_keys(RELATIONS, "relation_id", relation_ids, {"relation_id": 1}, fallback=False))


def relations_from(
    scope: ProjectScope, source_type: str, source_ids: list[str], relation_types: list[str]
) -> list[Doc]:
    """Relations whose subject is one of ``source_ids`` (index source_type, source_id, relation_type)."""
    query = {
        "source_type": source_type,
        "source_id": {"$in": source_ids},
        "relation_type": {"$in": relation_types},
    }
    projection = {"relation_type": 1, "source_id": 1, "target_id": 1}
    return scope.find(RELATIONS, query, projection)


def activities_by_id(scope: ProjectScope, activity_ids: Iterable[str]) -> dict[str, Doc]:
    """Activities keyed by ``activity_id``."""
    return scope.find_keys(ACTIVITIES, "activity_id", activity_ids)
