"""``/copilot/uploads`` (ours): CSV tables for a chat session's analyses (``data["<name>"]`` in the sandbox).

The table is parsed as data (never as code) and stored as Parquet in MongoDB, scoped by
(project, user, session), so any replica can serve the next turn. Parsing errors from
``qdash.uploads`` carry their own 4xx status; the body is read with a cap so an oversized file is a
413 before it is held in memory whole.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, HTTPException, Query, UploadFile
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from qdash.api.deps import AppSettings, CurrentPrincipal, Db
from qdash.api.schemas import ERROR_RESPONSES, Deleted, errors
from qdash.uploads import UploadError, UploadStore

router = APIRouter(prefix="/copilot/uploads", tags=["uploads"])

SessionQuery = Annotated[str, Query(min_length=1, max_length=200, description="the chat session")]
UPLOAD_ERRORS = {
    **errors(
        {400: "bad name or missing field", 409: "too many uploads in this session", 413: "file too large"}
    ),
    422: {"description": "not a parseable CSV table"},
}


class Column(BaseModel):
    name: str
    type: str


class UploadOut(BaseModel):
    name: str
    rows: int
    columns: list[Column]
    parquet_bytes: int
    encoding: str
    delimiter: str
    created_at: str


class UploadList(BaseModel):
    uploads: list[UploadOut]


def default_name(filename: str | None) -> str:
    """A ``data`` key from the file name: ``T1 run (2).csv`` → ``T1_run_2``."""
    stem = PurePath(filename or "").stem
    name = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", stem)).strip("_")
    if not name or not name[0].isalpha():
        name = f"table_{name}".rstrip("_")
    return name[:64]


def _http(exc: UploadError) -> HTTPException:
    return HTTPException(exc.status_code, exc.message)


@router.post("", status_code=201, response_model=UploadOut, responses=UPLOAD_ERRORS)
async def upload(
    *,
    principal: CurrentPrincipal,
    db: Db,
    settings: AppSettings,
    file: Annotated[UploadFile, File(description="a CSV file")],
    session_id: Annotated[str, Form(min_length=1, max_length=200)],
    name: Annotated[
        str | None, Form(max_length=64, description="data key; default: from the file name")
    ] = None,
) -> dict[str, Any]:
    """Parse a CSV into a typed table for this session; the answer lists the inferred columns."""
    limit = settings.uploads.max_bytes
    raw = await file.read(limit + 1)
    if len(raw) > limit:
        raise HTTPException(413, f"File too large (limit {limit} bytes)")
    store = UploadStore(db, settings.uploads)
    table = name or default_name(file.filename)
    try:
        info = await run_in_threadpool(
            store.save, principal.project_id, principal.username, session_id, table, raw
        )
    except UploadError as exc:
        raise _http(exc) from None
    return info.to_dict()


@router.get("", response_model=UploadList, responses=ERROR_RESPONSES)
async def list_uploads(
    principal: CurrentPrincipal, db: Db, settings: AppSettings, session_id: SessionQuery
) -> dict[str, Any]:
    store = UploadStore(db, settings.uploads)
    infos = await run_in_threadpool(store.list_uploads, principal.project_id, principal.username, session_id)
    return {"uploads": [info.to_dict() for info in infos]}


@router.delete(
    "/{name}",
    response_model=Deleted,
    responses=errors({404: "Upload not found"}),
)
async def delete_upload(
    name: str, principal: CurrentPrincipal, db: Db, settings: AppSettings, session_id: SessionQuery
) -> Deleted:
    store = UploadStore(db, settings.uploads)
    deleted = await run_in_threadpool(
        store.delete, principal.project_id, principal.username, session_id, name
    )
    if not deleted:
        raise HTTPException(404, "Upload not found")
    return Deleted()
