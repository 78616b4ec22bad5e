"""``GET /health``: is the process up and can it reach its database.

200 ``{"status": "ok", "database": {"mode", "ok": true}, "version"}``; 503 with ``status:
"unavailable"`` and the error (no secrets: the data layer's messages redact URIs) when the ping fails
or the database is not open yet. The ping runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from qdash import __version__
from qdash.db import DatabaseUnavailableError, database_mode, ping

router = APIRouter(tags=["health"])


@router.get("/health", response_model=None)
async def health(request: Request) -> dict[str, Any] | JSONResponse:
    """Liveness plus a database ping."""
    db = getattr(request.app.state, "db", None)
    if db is None:
        return _unavailable(None, "the database is not open yet (start-up still running or failed)")
    mode = database_mode(db)
    try:
        await run_in_threadpool(ping, db)
    except DatabaseUnavailableError as exc:
        return _unavailable(mode, str(exc))
    return {"status": "ok", "database": {"mode": mode, "ok": True}, "version": __version__}


def _unavailable(mode: str | None, error: str) -> JSONResponse:
    body = {
        "status": "unavailable",
        "database": {"mode": mode, "ok": False, "error": error},
        "version": __version__,
    }
    return JSONResponse(body, status_code=503)
