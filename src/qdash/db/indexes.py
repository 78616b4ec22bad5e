"""Every index the service relies on, as data, and ``ensure_indexes`` to create them at start-up.

Why data: tests (and the tools engineer) check that each tool query's filter + sort is served by an
index whose prefix matches (``find_index``), ``qdash db check`` reports which exist, and the same list
creates the indexes on both the embedded store and MongoDB. Lab-data indexes (one per query shape
of the tools) all lead with ``project_id``; the few that cannot (auth lookups, TTL expiry, per-user
rate windows) say so with ``tenant_scoped=False``.

A lab's database is upstream QDash's (``db.ownership``): there we only add missing non-unique
indexes named ``copilot_…`` and accept any existing index that serves the query; we never drop,
change or add a unique index on a collection upstream writes (its start-up and writes would fail).
Only on the copilot's own database (and its own ``copilot_*`` collections) are definitions exact: a
changed one is rebuilt (logged) and uniques are enforced. ``database.indexes: off`` does nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pymongo.database import Database
from pymongo.errors import OperationFailure

from qdash.db.ownership import OWN_COLLECTIONS, is_owned
from qdash.logging import get_logger

log = get_logger(__name__)

ASC, DESC = 1, -1
_CONFLICT_CODES = {85, 86}  # IndexOptionsConflict, IndexKeySpecsConflict
_DUPLICATE_KEY = 11000
DEGRADED_SUFFIX = "_nonunique"
#: Every index we create is named ``copilot_<field>_<dir>…``: an operator (and ``qdash db check``)
#: tells ours from the lab's at a glance, and our names never collide with upstream's.
NAME_PREFIX = "copilot_"


@dataclass(frozen=True)
class IndexSpec:
    """One index: ordered (field, direction) keys plus options."""

    keys: tuple[tuple[str, int], ...]
    unique: bool = False
    sparse: bool = False
    expire_after_seconds: int | None = None
    tenant_scoped: bool = True
    options: dict[str, Any] = field(default_factory=dict)
    explicit_name: str | None = None

    @property
    def name(self) -> str:
        """The explicit name, else ``copilot_`` + MongoDB's default (``field_dir_field_dir``)."""
        return self.explicit_name or NAME_PREFIX + "_".join(
            f"{name}_{direction}" for name, direction in self.keys
        )

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.keys)


def _ix(*keys: str, unique: bool = False, sparse: bool = False) -> IndexSpec:
    """Shorthand: ``"start_at-"`` means descending, anything else ascending."""
    pairs = tuple((k[:-1], DESC) if k.endswith("-") else (k, ASC) for k in keys)
    return IndexSpec(pairs, unique=unique, sparse=sparse)


def _global(
    *keys: str, unique: bool = False, sparse: bool = False, ttl: int | None = None, name: str | None = None
) -> IndexSpec:
    pairs = tuple((k, ASC) for k in keys)
    return IndexSpec(
        pairs, unique=unique, sparse=sparse, expire_after_seconds=ttl, tenant_scoped=False, explicit_name=name
    )


P = "project_id"

INDEXES: dict[str, list[IndexSpec]] = {
    "chip": [_ix(P, "chip_id", unique=True), _ix(P, "installed_at-")],
    "qubit": [_ix(P, "chip_id", "qid", unique=True), _ix(P, "chip_id")],
    "coupling": [_ix(P, "chip_id", "qid", unique=True), _ix(P, "chip_id")],
    "task_result_history": [
        _ix(P, "task_id", unique=True),
        _ix(P, "execution_id"),
        _ix(P, "chip_id", "start_at-"),
        _ix(P, "chip_id", "name", "qid", "status", "start_at-"),
        _ix(P, "chip_id", "output_parameter_names", "qid", "status", "start_at-"),
        _ix(P, "chip_id", "qid", "start_at-"),
        _ix(P, "chip_id", "status", "start_at-"),
        # beyond the tools' query shapes: "failed CheckT1 runs" and "failed runs on Q16" (search_task_results)
        _ix(P, "chip_id", "name", "status", "start_at-"),
        _ix(P, "chip_id", "qid", "status", "start_at-"),
        _ix(P, "source_task_id", sparse=True),
        # ours: GET /executions/figure?path= finds the run that recorded a figure path
        _ix(P, "figure_path"),
    ],
    "execution_history": [
        _ix(P, "execution_id", unique=True),
        _ix(P, "chip_id", "start_at-"),
        _ix(P, "chip_id", "status", "start_at-"),
        _ix(P, "chip_id", "tags", "start_at-"),
    ],
    "calibration_note": [
        _ix(P, "chip_id", "execution_id", "task_id", unique=True),
        _ix(P, "chip_id", "timestamp-"),
    ],
    "parameter_versions": [
        _ix(P, "entity_id", unique=True),
        _ix(P, "chip_id", "parameter_name", "qid", "version", unique=True),
        _ix(P, "chip_id", "parameter_name", "qid", "valid_until"),
        _ix(P, "execution_id"),
        _ix(P, "task_id"),
        _ix(P, "chip_id", "valid_from-"),
    ],
    "provenance_relations": [
        _ix(P, "relation_id", unique=True),
        _ix(P, "source_type", "source_id", "relation_type"),
        _ix(P, "target_type", "target_id", "relation_type"),
        _ix(P, "execution_id"),
    ],
    "provenance_activities": [
        _ix(P, "activity_id", unique=True),
        _ix(P, "execution_id"),
        _ix(P, "chip_id", "task_name", "qid", "started_at-"),
    ],
    # Ours; upstream's own ``copilot_chat_session`` (no project_id, unique (username, session_id))
    # is left alone.
    "copilot_project_chat_session": [
        _ix(P, "username", "session_id", unique=True),
        _ix(P, "username", "updated_at-"),
    ],
    # Named as the data-store wrapper (copilot/tools/wrappers/data_store.py) names them: MongoDB
    # refuses a second index on the same keys under another name.
    "copilot_data_store": [
        IndexSpec(_ix(P, "username", "session_id", "key").keys, unique=True, explicit_name="scope_key"),
        _global("expires_at", ttl=0, name="ttl"),
    ],
    "copilot_upload": [_ix(P, "username", "session_id", "name", unique=True)],
    # AI review (qdash.review): reviews of a result, a chip's newest, a job's; jobs newest first;
    # the unfinished jobs of every project, longest waiting first: what a server takes over when
    # their process died (review/lease.py: a maintenance query across projects, like TTL expiry)
    "copilot_review": [_ix(P, "task_id"), _ix(P, "chip_id", "result_start_at-"), _ix(P, "job_id")],
    "copilot_review_job": [_ix(P, "created_at-"), _global("status", "updated_at")],
    # What each review wrote to upstream's task results (review/writes.py): a job's, oldest first
    # (what an undo takes back), and a result's (who wrote it after a job); a job's undos
    "copilot_review_write": [_ix(P, "job_id", "started_at"), _ix(P, "task_id", "started_at")],
    "copilot_review_undo": [_ix(P, "job_id")],
    # A project's model review slots, free or expired first (review/slots.py), and the line of
    # reviews waiting for one, oldest first; a killed process's waiters expire (review/slot_line.py)
    "copilot_review_slot": [_ix(P, "until")],
    "copilot_review_slot_wait": [_ix(P, "since"), _global("alive_until", ttl=0)],
    # Lab actions (qdash.actions): a session's pending proposal; a project's audit, newest first,
    # and its records a crash left ``started`` (settled on every read)
    "copilot_action_approval": [_ix(P, "username", "session_id", "status")],
    "copilot_action_audit": [_ix(P, "started_at-"), _ix(P, "state", "started_at")],
    # Auth: looked up before a project is known. Sparse so upstream users without a hash (or
    # without a plain token) do not collide on null.
    "user": [
        _global("access_token_hash", unique=True, sparse=True),
        _global("access_token", unique=True, sparse=True),
        _global("username", unique=True),
    ],
    "project": [_ix(P, unique=True), _global("owner_username")],
    "project_membership": [_ix(P, "username", unique=True), _global("username")],
    # Per-user fixed windows (``_id`` = "username:window"); documents expire on their own.
    "copilot_rate_limit": [_global("expires_at", ttl=0)],
}


IndexPolicy = Literal["create_missing", "off"]


@dataclass(frozen=True)
class IndexState:
    """One wanted index and the existing index that serves it (``None``: missing)."""

    collection: str
    spec: IndexSpec
    served_by: str | None

    @property
    def missing(self) -> bool:
        return self.served_by is None


def index_states(
    db: Database[Any], indexes: Mapping[str, Sequence[IndexSpec]] | None = None
) -> list[IndexState]:
    """Which of our indexes exist (or are served by an existing one) and which are missing.

    Read-only: ``qdash db check`` reports it, ``ensure_indexes`` acts on it.
    """
    owned = is_owned(db)
    states = []
    for collection_name, specs in (indexes or INDEXES).items():
        existing = db[collection_name].index_information()
        strict = _strict(collection_name, owned)
        states += [
            IndexState(collection_name, spec, _served_by(existing, spec, strict=strict)) for spec in specs
        ]
    return states


def ensure_indexes(
    db: Database[Any],
    indexes: Mapping[str, Sequence[IndexSpec]] | None = None,
    *,
    policy: IndexPolicy = "create_missing",
) -> int:
    """Create the missing indexes of ``indexes`` (default ``INDEXES``); return how many were built.

    On a lab's database (``db.ownership``) this only ever adds non-unique indexes under our
    ``copilot_`` prefix, and accepts any existing index that serves the query; it never drops or
    changes one. On the copilot's own database (and its own collections anywhere) definitions are
    exact: a changed one is rebuilt, uniques are enforced. ``policy="off"`` only logs what is
    missing. Blocking; call it off the event loop.
    """
    if policy == "off":
        missing = [s for s in index_states(db, indexes) if s.missing]
        if missing:
            log.warning(
                "indexes missing; database.indexes is off, so queries may scan",
                missing=len(missing),
                hint="run `qdash db check` to list them and `qdash db check --create-indexes` to add them",
            )
        return 0
    owned = is_owned(db)
    built = 0
    for collection_name, specs in (indexes or INDEXES).items():
        collection = db[collection_name]
        strict = _strict(collection_name, owned)
        for spec in specs:
            existing = collection.index_information()
            if _served_by(existing, spec, strict=strict) is not None:
                continue
            if strict:
                _create_exact(collection, spec, existing)
            elif not _create_as_guest(collection, spec):
                continue
            built += 1
    return built


def _strict(collection_name: str, owned: bool) -> bool:
    """Exact definitions (uniques, rebuilds) only where nobody else writes."""
    return owned or collection_name in OWN_COLLECTIONS


def _create_exact(collection: Any, spec: IndexSpec, existing: Mapping[str, Any]) -> None:
    """Our own database or collection: replace a changed definition, degrade a violated unique."""
    for name in _conflicting(existing, spec):
        log.warning("rebuilding changed index", collection=collection.name, index=name)
        collection.drop_index(name)
    try:
        collection.create_index(list(spec.keys), **_create_kwargs(spec))
    except OperationFailure as exc:
        if exc.code == _DUPLICATE_KEY:
            _create_degraded(collection, spec)
            return
        if exc.code not in _CONFLICT_CODES and "different options" not in str(exc):
            raise
        raise OperationFailure(
            f"index {spec.name} on {collection.name} conflicts with an existing index ({exc}); "
            "drop the old index by hand or align its definition with qdash/db/indexes.py",
            exc.code,
        ) from None


def _create_as_guest(collection: Any, spec: IndexSpec) -> bool:
    """A lab's collection: add a plain (never unique) index under our prefix, or leave theirs be."""
    kwargs = _create_kwargs(spec)
    kwargs.pop("unique", None)
    try:
        collection.create_index(list(spec.keys), **kwargs)
    except OperationFailure as exc:
        if exc.code not in _CONFLICT_CODES and "different options" not in str(exc):
            raise
        log.warning(
            "kept the lab's index; ours would conflict with it",
            collection=collection.name,
            index=spec.name,
            error=str(exc),
        )
        return False
    return True


def _create_degraded(collection: Any, spec: IndexSpec) -> None:
    """Existing documents share a unique key (an upstream-written copy of our database, say): the
    service must still start, and its queries still need the index."""
    name = spec.name + DEGRADED_SUFFIX
    log.warning(
        "existing documents violate a unique index; created it non-unique",
        collection=collection.name,
        index=name,
        hint="reads use the most recently updated document per key; remove the duplicates, drop "
        "this index and restart to get the unique constraint",
    )
    kwargs = {**_create_kwargs(spec), "name": name}
    kwargs.pop("unique", None)
    collection.create_index(list(spec.keys), **kwargs)


def _conflicting(existing: Mapping[str, Any], spec: IndexSpec) -> list[str]:
    """Existing indexes that would block ``spec``: same name, or same keys with other options."""
    return [
        name
        for name, info in existing.items()
        if name != "_id_" and (name == spec.name or _keys(info) == spec.keys)
    ]


def _create_kwargs(spec: IndexSpec) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"name": spec.name, **spec.options}
    if spec.unique:
        kwargs["unique"] = True
    if spec.sparse:
        kwargs["sparse"] = True
    if spec.expire_after_seconds is not None:
        kwargs["expireAfterSeconds"] = spec.expire_after_seconds
    return kwargs


def _keys(info: Mapping[str, Any]) -> tuple[tuple[str, int | str], ...]:
    """(field, direction) pairs; numeric directions as int, special ones ("text", "2dsphere") as is."""
    return tuple(
        (name, direction if isinstance(direction, str) else int(direction)) for name, direction in info["key"]
    )


def _served_by(existing: Mapping[str, Any], spec: IndexSpec, *, strict: bool) -> str | None:
    """The name of an existing index that is ``spec`` (strict) or serves its queries (guest)."""
    for name, info in existing.items():
        if _matches(info, spec) or (not strict and _serves(info, spec)):
            return name
    if strict and spec.unique and spec.name + DEGRADED_SUFFIX in existing:
        log.warning(
            "unique index kept non-unique: existing documents share its key",
            index=spec.name + DEGRADED_SUFFIX,
            hint="remove the duplicates, drop this index, restart to get the unique one",
        )
        return spec.name + DEGRADED_SUFFIX
    return None


def _matches(info: Mapping[str, Any], spec: IndexSpec) -> bool:
    """Whether an existing index (``index_information`` entry) already is ``spec``."""
    return (
        _keys(info) == spec.keys
        and bool(info.get("unique")) == spec.unique
        and bool(info.get("sparse")) == spec.sparse
        and info.get("expireAfterSeconds") == spec.expire_after_seconds
    )


def _serves(info: Mapping[str, Any], spec: IndexSpec) -> bool:
    """Whether MongoDB can answer ``spec``'s queries from this index: ``spec``'s keys are its prefix
    (walked forwards or backwards) and nothing narrows it (partial filter, collation, sparseness
    the query does not expect). TTL specs need the exact index: expiry is their purpose."""
    if spec.expire_after_seconds is not None or "partialFilterExpression" in info or "collation" in info:
        return False
    if info.get("sparse") and not spec.sparse:
        return False
    head = _keys(info)[: len(spec.keys)]
    flipped = tuple((name, -direction) for name, direction in spec.keys)
    return head in (spec.keys, flipped)


def find_index(collection: str, equality: Iterable[str], sort: Sequence[str] = ()) -> IndexSpec | None:
    """The first index of ``collection`` that serves a query with equality filters on ``equality``
    (in any order) followed by a sort on ``sort`` (in order), or None.

    The index must start with exactly the equality fields, then continue with the sort fields; this is
    the shape MongoDB uses without an in-memory sort (direction is ignored: an index can be walked
    backwards).
    """
    wanted = set(equality)
    for spec in INDEXES.get(collection, []):
        head, tail = spec.fields[: len(wanted)], spec.fields[len(wanted) :]
        if set(head) == wanted and tuple(tail[: len(sort)]) == tuple(sort):
            return spec
    return None
