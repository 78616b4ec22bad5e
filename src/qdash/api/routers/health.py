"""``GET /health``: is the process up and can it reach its database."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["health"])


@router.get("/health")
def health() -> dict[str, str]:
    """Liveness (the database ping arrives with the data layer)."""
    return {"status": "ok"}
