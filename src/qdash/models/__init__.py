"""Pydantic models of the stored documents and of the topology files.

Read ``common.py`` first (ParameterModel, UTC datetimes, natural ``_id``s), then the collection
modules: ``chip`` (chip, qubit, coupling), ``task`` (task results, executions, notes),
``provenance``, ``auth`` (users store only a token hash), ``copilot`` (sessions, data store), and
``topology`` (the ``config/topologies`` loader with its fallback grid). ``answer`` is no document:
the dashboard's answer (its blocks) as types, here because every layer may import this package.
"""

from qdash.models.auth import Project, ProjectMembership, Role, User, hash_token
from qdash.models.chip import Chip, CouplingState, QubitState
from qdash.models.common import Document, ParameterModel, SystemInfo, UtcDatetime, utc_now
from qdash.models.copilot import ChatMessage, CopilotChatSession, CopilotDataStoreEntry
from qdash.models.provenance import (
    ParameterVersion,
    ProvenanceActivity,
    ProvenanceRelation,
    activity_id_for,
    entity_id_for,
    relation_id_for,
)
from qdash.models.task import CalibrationNote, ExecutionHistory, TaskResultHistory
from qdash.models.topology import (
    Topology,
    TopologyError,
    fallback_topology,
    load_topology,
    load_topology_or_fallback,
)

DOCUMENT_MODELS: tuple[type[Document], ...] = (
    Chip,
    QubitState,
    CouplingState,
    TaskResultHistory,
    ExecutionHistory,
    CalibrationNote,
    ParameterVersion,
    ProvenanceActivity,
    ProvenanceRelation,
    Project,
    ProjectMembership,
    User,
    CopilotChatSession,
    CopilotDataStoreEntry,
)
"""Every stored document model; ``model.collection`` is its collection name."""

__all__ = [
    "DOCUMENT_MODELS",
    "CalibrationNote",
    "ChatMessage",
    "Chip",
    "CopilotChatSession",
    "CopilotDataStoreEntry",
    "CouplingState",
    "Document",
    "ExecutionHistory",
    "ParameterModel",
    "ParameterVersion",
    "Project",
    "ProjectMembership",
    "ProvenanceActivity",
    "ProvenanceRelation",
    "QubitState",
    "Role",
    "SystemInfo",
    "TaskResultHistory",
    "Topology",
    "TopologyError",
    "User",
    "UtcDatetime",
    "activity_id_for",
    "entity_id_for",
    "fallback_topology",
    "hash_token",
    "load_topology",
    "load_topology_or_fallback",
    "relation_id_for",
    "utc_now",
]
