"""Uploaded tables in MongoDB (``copilot_upload``), scoped by project, user, session and name.

Why MongoDB and not files: API processes keep no state, so any replica can serve the session;
the Parquet bytes live beside the session's other data and go away with it. Loading turns a
table into the plain row dicts the sandbox receives as ``data["<name>"]``.
"""

from __future__ import annotations

import io
import math
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow.parquet as pq
from bson.binary import Binary
from pymongo.database import Database

from qdash.settings import UploadSettings
from qdash.uploads.parsing import UploadError, check_name, parse_csv, to_parquet

COLLECTION = "copilot_upload"
Rows = list[dict[str, Any]]
MAX_UPLOADS_PER_SESSION = 20


@dataclass(frozen=True)
class UploadInfo:
    """What the API returns after an upload (no data)."""

    name: str
    rows: int
    columns: list[dict[str, str]]
    parquet_bytes: int
    encoding: str
    delimiter: str
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "created_at": self.created_at.isoformat()}


class UploadStore:
    """Save, list, delete and load uploaded tables of one (project, user, session)."""

    def __init__(self, db: Database[dict[str, Any]], settings: UploadSettings) -> None:
        self.collection = db[COLLECTION]
        self.settings = settings

    @staticmethod
    def ensure_indexes(db: Database[dict[str, Any]]) -> None:
        """The scope key is unique: a second upload with the same name replaces the first."""
        db[COLLECTION].create_index(
            [("project_id", 1), ("username", 1), ("session_id", 1), ("name", 1)], unique=True
        )

    @staticmethod
    def _scope(project_id: str, username: str, session_id: str) -> dict[str, str]:
        for label, value in (("project_id", project_id), ("username", username), ("session_id", session_id)):
            if not value:
                raise UploadError(f"{label} is required for uploads", status_code=400)
        return {"project_id": project_id, "username": username, "session_id": session_id}

    def save(self, project_id: str, username: str, session_id: str, name: str, raw: bytes) -> UploadInfo:
        """Parse ``raw`` CSV and store it as Parquet (blocking: call from a worker thread)."""
        scope = self._scope(project_id, username, session_id)
        check_name(name)
        parsed = parse_csv(raw, self.settings)
        data = to_parquet(parsed.table)
        existing = self.collection.count_documents({**scope, "name": {"$ne": name}})
        if existing >= MAX_UPLOADS_PER_SESSION:
            raise UploadError(
                f"this session already has {existing} uploads; delete one first", status_code=409
            )
        info = UploadInfo(
            name,
            parsed.table.num_rows,
            parsed.columns,
            len(data),
            parsed.encoding,
            parsed.delimiter,
            datetime.now(UTC),
        )
        document = {
            **scope,
            "name": name,
            "parquet": Binary(data),
            "rows": info.rows,
            "columns": info.columns,
            "encoding": info.encoding,
            "delimiter": info.delimiter,
            "parquet_bytes": info.parquet_bytes,
            "created_at": info.created_at,
        }
        self.collection.replace_one({**scope, "name": name}, document, upsert=True)
        return info

    def list_uploads(self, project_id: str, username: str, session_id: str) -> list[UploadInfo]:
        """The session's uploads, by name, without their data."""
        scope = self._scope(project_id, username, session_id)
        docs = self.collection.find(scope, {"parquet": 0}).sort("name", 1)
        return [
            UploadInfo(
                d["name"],
                d["rows"],
                d["columns"],
                d["parquet_bytes"],
                d["encoding"],
                d["delimiter"],
                d["created_at"],
            )
            for d in docs
        ]

    def delete(self, project_id: str, username: str, session_id: str, name: str) -> bool:
        result = self.collection.delete_one({**self._scope(project_id, username, session_id), "name": name})
        return result.deleted_count > 0

    def load_rows(self, project_id: str, username: str, session_id: str) -> dict[str, Rows]:
        """Every upload of the session as ``{name: [row dict, …]}`` for the sandbox's ``data``."""
        scope = self._scope(project_id, username, session_id)
        tables: dict[str, Rows] = {}
        for doc in self.collection.find(scope, {"name": 1, "parquet": 1}).sort("name", 1):
            table = pq.read_table(io.BytesIO(bytes(doc["parquet"])))
            tables[doc["name"]] = [_plain_row(row) for row in table.to_pylist()]
        return tables


def _plain_row(row: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready row: timestamps as ISO 8601, NaN as ``None``."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, datetime):
            out[key] = value.isoformat()
        elif isinstance(value, float) and not math.isfinite(value):
            out[key] = None
        else:
            out[key] = value
    return out
