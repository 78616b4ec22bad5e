"""Provenance ids and validation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from qdash.models import ParameterVersion, ProvenanceRelation, entity_id_for, relation_id_for

WHEN = datetime(2026, 2, 27, 1, 12, 3, tzinfo=UTC)


def _version(**extra: object) -> ParameterVersion:
    fields: dict[str, object] = {
        "entity_id": entity_id_for("qubit_frequency", "16", "20260227-001", "5b0c"),
        "parameter_name": "qubit_frequency",
        "qid": "16",
        "value": 7.9812,
        "unit": "GHz",
        "version": 7,
        "valid_from": WHEN,
        "execution_id": "20260227-001",
        "task_id": "5b0c",
        "task_name": "CheckQubitFrequency",
        "project_id": "proj-demo",
        "chip_id": "64Qv3",
    }
    fields.update(extra)
    return ParameterVersion.model_validate(fields)


def test_entity_id_has_three_colons_and_is_the_natural_id() -> None:
    version = _version()
    assert version.entity_id == "qubit_frequency:16:20260227-001:5b0c"
    assert version.to_mongo()["_id"] == version.entity_id
    assert version.valid_until is None


def test_coupling_entity_ids_keep_the_dash() -> None:
    entity = entity_id_for("zx90_gate_fidelity", "4-1", "20260227-002", "ab")
    assert entity == "zx90_gate_fidelity:4-1:20260227-002:ab"


def test_malformed_entity_ids_and_versions_are_rejected() -> None:
    with pytest.raises(ValidationError, match="exactly 3 colons"):
        _version(entity_id="t1:16:20260227-001")
    with pytest.raises(ValidationError, match="count from 1"):
        _version(version=0)
    with pytest.raises(ValueError, match="must not contain ':'"):
        entity_id_for("t1", "1:2", "e", "t")


def test_relation_round_trip() -> None:
    rid = relation_id_for("wasGeneratedBy", "t1:16:e:t", "e:t")
    relation = ProvenanceRelation(
        relation_id=rid,
        relation_type="wasGeneratedBy",
        source_type="entity",
        source_id="t1:16:e:t",
        target_type="activity",
        target_id="e:t",
        created_at=WHEN,
        project_id="proj-demo",
        execution_id="e",
    )
    doc = relation.to_mongo()
    assert doc["_id"] == "wasGeneratedBy:t1:16:e:t:e:t"
    assert ProvenanceRelation.from_mongo(doc) == relation.model_copy(update={"id": rid})
    with pytest.raises(ValidationError):
        ProvenanceRelation.model_validate({**doc, "relation_type": "generated"})
