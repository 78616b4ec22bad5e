"""Every index the service relies on, as data, and ``ensure_indexes`` to create them at start-up.

Why data: tests (and the tools engineer) check that each tool query's filter + sort is served by an
index whose prefix matches (``find_index``), and the same list creates the indexes on both the
embedded store and MongoDB. Lab-data indexes follow domain.md §4 and all lead with ``project_id``;
the few that cannot (auth lookups, TTL expiry, per-user rate windows) say so with
``tenant_scoped=False``.

``ensure_indexes`` is idempotent: an index with the same keys and options (under any name) is a
no-op; an index whose definition changed in this file is dropped and rebuilt (logged) instead of
failing start-up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pymongo.database import Database
from pymongo.errors import OperationFailure

from qdash.logging import get_logger

log = get_logger(__name__)

ASC, DESC = 1, -1
_CONFLICT_CODES = {85, 86}  # IndexOptionsConflict, IndexKeySpecsConflict
_DUPLICATE_KEY = 11000
DEGRADED_SUFFIX = "_nonunique"


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
        """The explicit name, else MongoDB's default (``field_dir_field_dir``), same on both stores."""
        return self.explicit_name or "_".join(f"{name}_{direction}" for name, direction in self.keys)

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
        # ours, beyond domain.md §4: "failed CheckT1 runs" and "failed runs on Q16" (search_task_results)
        _ix(P, "chip_id", "name", "status", "start_at-"),
        _ix(P, "chip_id", "qid", "status", "start_at-"),
        _ix(P, "source_task_id", sparse=True),
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
    "copilot_chat_session": [
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


def ensure_indexes(db: Database[Any], indexes: dict[str, list[IndexSpec]] | None = None) -> int:
    """Create every index in ``indexes`` (default ``INDEXES``); return how many were (re)built.

    Blocking; call it off the event loop.
    """
    built = 0
    for collection_name, specs in (indexes or INDEXES).items():
        collection = db[collection_name]
        existing = collection.index_information()
        for spec in specs:
            # Any name will do when keys and options agree (upstream databases name indexes freely).
            if any(_matches(info, spec) for info in existing.values()):
                continue
            if spec.unique and spec.name + DEGRADED_SUFFIX in existing:
                log.warning(
                    "unique index kept non-unique: existing documents share its key",
                    collection=collection_name,
                    index=spec.name + DEGRADED_SUFFIX,
                    hint="remove the duplicates, drop this index, restart to get the unique one",
                )
                continue
            for name in _conflicting(existing, spec):
                log.warning("rebuilding changed index", collection=collection_name, index=name)
                collection.drop_index(name)
            try:
                collection.create_index(list(spec.keys), **_create_kwargs(spec))
            except OperationFailure as exc:
                if exc.code == _DUPLICATE_KEY:
                    _create_degraded(collection, spec)
                    built += 1
                    continue
                if exc.code not in _CONFLICT_CODES and "different options" not in str(exc):
                    raise
                raise OperationFailure(
                    f"index {spec.name} on {collection_name} conflicts with an existing index ({exc}); "
                    "drop the old index by hand or align its definition with qdash/db/indexes.py",
                    exc.code,
                ) from None
            built += 1
    return built


def _create_degraded(collection: Any, spec: IndexSpec) -> None:
    """Upstream databases can hold several documents per key (domain.md §4: their unique keys also
    contain ``username``); the service must still start, and its queries still need the index."""
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


def _matches(info: dict[str, Any] | None, spec: IndexSpec) -> bool:
    """Whether an existing index (``index_information`` entry) already is ``spec``."""
    if info is None:
        return False
    return (
        _keys(info) == spec.keys
        and bool(info.get("unique")) == spec.unique
        and bool(info.get("sparse")) == spec.sparse
        and info.get("expireAfterSeconds") == spec.expire_after_seconds
    )


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
