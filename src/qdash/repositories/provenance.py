"""Parameter versions and the PROV graph (``parameter_versions``, ``provenance_relations``,
``provenance_activities``).

Lookups are batched per graph level (``$in``), so a walk of depth d costs O(d) queries, not one
query per node.
"""

from __future__ import annotations

from qdash.repositories.scope import Doc, ProjectScope

VERSIONS = "parameter_versions"
RELATIONS = "provenance_relations"
ACTIVITIES = "provenance_activities"


def version_history(
    scope: ProjectScope, chip_id: str, parameter_name: str, qids: list[str], limit: int
) -> list[Doc]:
    """Newest versions of one parameter on one qid (``qids`` = spellings of the same id)."""
    query = {"chip_id": chip_id, "parameter_name": parameter_name, "qid": {"$in": qids}}
    return scope.find(VERSIONS, query, sort=[("version", -1)], limit=limit)


def versions_by_entity(scope: ProjectScope, entity_ids: list[str]) -> dict[str, Doc]:
    """Parameter versions keyed by ``entity_id``."""
    docs = scope.find(VERSIONS, {"entity_id": {"$in": entity_ids}})
    return {str(doc["entity_id"]): doc for doc in docs}


def current_versions(
    scope: ProjectScope, chip_id: str, parameter_names: list[str], qids: list[str]
) -> dict[tuple[str, str], int]:
    """Latest version number per (parameter, qid): the one whose ``valid_until`` is null."""
    query = {
        "chip_id": chip_id,
        "parameter_name": {"$in": parameter_names},
        "qid": {"$in": qids},
        "valid_until": None,
    }
    docs = scope.find(VERSIONS, query, {"parameter_name": 1, "qid": 1, "version": 1})
    return {(str(d["parameter_name"]), str(d["qid"])): int(d["version"]) for d in docs}


def relations_from(
    scope: ProjectScope, source_type: str, source_ids: list[str], relation_types: list[str]
) -> list[Doc]:
    """Relations whose subject is one of ``source_ids`` (walks from an entity or activity)."""
    query = {
        "source_type": source_type,
        "source_id": {"$in": source_ids},
        "relation_type": {"$in": relation_types},
    }
    projection = {"relation_type": 1, "source_id": 1, "target_id": 1, "target_type": 1}
    return scope.find(RELATIONS, query, projection)


def activities_by_id(scope: ProjectScope, activity_ids: list[str]) -> dict[str, Doc]:
    """Activities keyed by ``activity_id``."""
    docs = scope.find(ACTIVITIES, {"activity_id": {"$in": activity_ids}})
    return {str(doc["activity_id"]): doc for doc in docs}
