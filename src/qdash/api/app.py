"""The FastAPI app factory: one place that wires settings, the database and the routers."""

from __future__ import annotations

from fastapi import FastAPI

from qdash import __version__
from qdash.api.routers import health
from qdash.api.setup import install_copilot
from qdash.settings import Settings, get_settings


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; ``settings`` defaults to the process configuration."""
    settings = settings or get_settings()
    app = FastAPI(title="QDash Copilot", version=__version__)
    app.state.settings = settings
    app.include_router(health.router)
    install_copilot(app)
    return app
