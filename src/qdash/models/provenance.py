"""Provenance (W3C PROV style): ``parameter_versions``, ``provenance_activities``, ``provenance_relations``.

Relations point subject → object: ``wasGeneratedBy`` entity → activity, ``used``
activity → entity, ``wasDerivedFrom`` output entity → input entity, ``wasInvalidatedBy`` superseded
entity → superseding activity. Entity and activity ids embed the task UUID, so they are globally
unique and serve as natural ``_id``s.
"""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from qdash.models.common import Document, UtcDatetime

RelationType = Literal["wasGeneratedBy", "used", "wasDerivedFrom", "wasAttributedTo", "wasInvalidatedBy"]
NodeType = Literal["entity", "activity", "agent"]


def entity_id_for(parameter_name: str, qid: str, execution_id: str, task_id: str) -> str:
    """``parameter_name:qid:execution_id:task_id``; refuses parts that would break the 3-colon rule."""
    parts = (parameter_name, qid, execution_id, task_id)
    if any(":" in part for part in parts):
        raise ValueError(f"entity id parts must not contain ':' (got {parts})")
    return ":".join(parts)


def activity_id_for(execution_id: str, task_id: str) -> str:
    """``execution_id:task_id``, the id of the activity that ran one task."""
    return f"{execution_id}:{task_id}"


def relation_id_for(relation_type: str, source_id: str, target_id: str) -> str:
    """``relation_type:source_id:target_id``."""
    return f"{relation_type}:{source_id}:{target_id}"


class ParameterVersion(Document, collection="parameter_versions", natural_key=("entity_id",)):
    """One stored value of (chip, parameter, qid) with its validity interval (null end = current)."""

    entity_id: str
    parameter_name: str
    qid: str
    value: float | int | str
    value_type: str = "float"
    unit: str = ""
    error: float = 0.0
    version: int
    valid_from: UtcDatetime
    valid_until: UtcDatetime | None = None
    execution_id: str
    task_id: str
    task_name: str
    project_id: str
    chip_id: str

    @field_validator("entity_id")
    @classmethod
    def _three_colons(cls, value: str) -> str:
        if value.count(":") != 3:
            raise ValueError(
                f"entity_id {value!r} must have exactly 3 colons: parameter_name:qid:execution_id:task_id"
            )
        return value

    @field_validator("version")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"version must count from 1 (got {value})")
        return value


class ProvenanceActivity(Document, collection="provenance_activities", natural_key=("activity_id",)):
    """One task run as a PROV activity."""

    activity_id: str
    execution_id: str
    task_id: str
    task_name: str
    task_type: str
    qid: str
    started_at: UtcDatetime | None = None
    ended_at: UtcDatetime | None = None
    status: str
    project_id: str
    chip_id: str


class ProvenanceRelation(Document, collection="provenance_relations", natural_key=("relation_id",)):
    """One edge of the provenance graph."""

    relation_id: str
    relation_type: RelationType
    source_type: NodeType
    source_id: str
    target_type: NodeType
    target_id: str
    created_at: UtcDatetime
    project_id: str
    execution_id: str
