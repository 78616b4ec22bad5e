"""The indexes upstream QDash's own document classes declare, with their exact names and options.

Why exact: a lab's database already carries them (bunnet creates them at upstream's start-up), and
the tests prove our start-up leaves every one of them as it found it — a renamed, dropped or
"fixed" index makes upstream's next start-up fail with ``IndexOptionsConflict``. Names are
MongoDB's defaults (``field_dir_…``) unless upstream gives one. Sources: README.md next to this file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pymongo import IndexModel
from pymongo.database import Database

ASC, DESC = 1, -1


@dataclass(frozen=True)
class UpstreamIndex:
    """One ``IndexModel`` of an upstream ``Document.Settings.indexes`` list."""

    collection: str
    keys: tuple[tuple[str, int], ...]
    unique: bool = False
    sparse: bool = False
    name: str | None = None
    partial: dict[str, Any] = field(default_factory=dict)

    @property
    def index_name(self) -> str:
        """The name MongoDB stores: upstream's explicit one, else ``field_dir_field_dir``."""
        return self.name or "_".join(f"{key}_{direction}" for key, direction in self.keys)

    def model(self) -> IndexModel:
        options: dict[str, Any] = {"name": self.index_name}
        if self.unique:
            options["unique"] = True
        if self.sparse:
            options["sparse"] = True
        if self.partial:
            options["partialFilterExpression"] = self.partial
        return IndexModel(list(self.keys), **options)


def _ix(collection: str, *keys: str, **options: Any) -> UpstreamIndex:
    """``"start_at-"`` is descending, anything else ascending (as upstream writes them)."""
    pairs = tuple((k[:-1], DESC) if k.endswith("-") else (k, ASC) for k in keys)
    return UpstreamIndex(collection, pairs, **options)


P = "project_id"
TRH = "task_result_history"

UPSTREAM_INDEXES: tuple[UpstreamIndex, ...] = (
    # dbmodel/user.py
    _ix("user", "username", unique=True),
    _ix("user", "access_token", unique=True),
    # dbmodel/project.py, dbmodel/project_membership.py
    _ix("project", P, unique=True),
    _ix("project", "owner_username", "name", unique=True),
    _ix("project_membership", P, "username", unique=True),
    _ix("project_membership", "username", "status"),
    # dbmodel/chip.py, qubit.py, coupling.py: the unique keys contain username
    _ix("chip", P, "chip_id", "username", unique=True),
    _ix("chip", P, "username", "installed_at-"),
    _ix("qubit", P, "chip_id", "qid", "username", unique=True),
    _ix("qubit", P, "chip_id"),
    _ix("coupling", P, "chip_id", "qid", "username", unique=True),
    _ix("coupling", P, "chip_id"),
    # dbmodel/execution_counter.py: one counter per user
    _ix("execution_counter", P, "date", "username", "chip_id", unique=True),
    # dbmodel/execution_history.py
    _ix("execution_history", P, "execution_id", unique=True),
    _ix("execution_history", P, "chip_id", "start_at-"),
    _ix("execution_history", P, "chip_id"),
    _ix("execution_history", P, "username", "start_at-"),
    # dbmodel/task_result_history.py (the version with excluded / cooldown_id / user_note)
    _ix(TRH, P, "task_id", unique=True),
    _ix(TRH, P, "execution_id"),
    _ix(TRH, P, "chip_id", "start_at-"),
    _ix(TRH, P, "chip_id", "name", "qid", "end_at-"),
    _ix(TRH, P, "chip_id", "task_type", "qid", "start_at-"),
    _ix(TRH, P, "chip_id", "tags", "start_at"),
    _ix(TRH, "chip_id", "username", "task_type", "status", "start_at-"),
    _ix(TRH, P, "source_task_id", sparse=True),
    *(
        _ix(
            TRH,
            P,
            "chip_id",
            f"{note}.updated_at-",
            name=f"project_chip_{note}_idx",
            partial={f"{note}.updated_at": {"$type": "date"}},
        )
        for note in ("user_note", "ai_review_note")
    ),
    _ix(
        TRH,
        P,
        "cooldown_id",
        "start_at-",
        name="project_cooldown_start_idx",
        partial={"cooldown_id": {"$gt": ""}},
    ),
    # dbmodel/calibration_note.py: the unique key contains username
    _ix("calibration_note", P, "execution_id", "task_id", "username", "chip_id", unique=True),
    _ix("calibration_note", P, "chip_id", "timestamp", name="project_chip_timestamp_idx"),
    # dbmodel/provenance.py
    _ix("parameter_versions", "entity_id", unique=True),
    _ix("parameter_versions", P, "parameter_name", "qid", "version-"),
    _ix("parameter_versions", P, "parameter_name", "qid", "valid_until"),
    _ix("parameter_versions", P, "execution_id"),
    _ix("parameter_versions", P, "task_id"),
    _ix("parameter_versions", P, "chip_id", "valid_from-"),
    _ix("parameter_versions", P, "parameter_name", "qid", "version", unique=True),
    _ix("provenance_relations", "relation_id", unique=True),
    _ix("provenance_relations", P, "source_type", "source_id", "relation_type"),
    _ix("provenance_relations", P, "target_type", "target_id", "relation_type"),
    _ix("provenance_relations", P, "execution_id"),
    _ix("provenance_relations", P, "relation_type", "created_at-"),
    _ix("provenance_activities", "activity_id", unique=True),
    _ix("provenance_activities", P, "execution_id"),
    _ix("provenance_activities", P, "task_name", "qid", "started_at-"),
    # dbmodel/copilot_chat_session.py: upstream's own sessions, no project_id
    _ix("copilot_chat_session", "username", "session_id", unique=True, name="username_session_unique_idx"),
    _ix("copilot_chat_session", "username", "updated_at-", name="username_updated_idx"),
)


def create_upstream_indexes(db: Database[Any]) -> None:
    """What upstream's start-up (bunnet ``init_bunnet``) creates, collection by collection."""
    by_collection: dict[str, list[IndexModel]] = {}
    for index in UPSTREAM_INDEXES:
        by_collection.setdefault(index.collection, []).append(index.model())
    for collection, models in by_collection.items():
        db[collection].create_indexes(models)


def upstream_index_snapshot(db: Database[Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(collection, name): definition}`` of every upstream index as the database holds it now.

    The definition is what upstream's start-up compares (keys, unique, sparse, partial filter);
    a missing index maps to ``{}``, so a dropped one shows up as a difference.
    """
    snapshot: dict[tuple[str, str], dict[str, Any]] = {}
    info_by_collection: dict[str, Any] = {}
    for index in UPSTREAM_INDEXES:
        if index.collection not in info_by_collection:
            info_by_collection[index.collection] = db[index.collection].index_information()
        info = info_by_collection[index.collection].get(index.index_name)
        snapshot[(index.collection, index.index_name)] = (
            {}
            if info is None
            else {
                "key": [(k, int(d)) for k, d in info["key"]],
                "unique": bool(info.get("unique")),
                "sparse": bool(info.get("sparse")),
                "partialFilterExpression": info.get("partialFilterExpression"),
            }
        )
    return snapshot
