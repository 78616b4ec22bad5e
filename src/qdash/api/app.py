"""The FastAPI app factory: one place that wires settings, the database and the routers.

The database is opened by the lifespan (``api/lifespan.py``), once per process, and lives on
``app.state.db``; routers reach it through ``api/deps.py``. Tests and embedding code may pass an open
database (``create_app(settings, db=…)``, or set ``app.state.db`` before start-up); the app then
neither opens nor closes one.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pymongo.database import Database

from qdash import __version__
from qdash.api.body_limit import BodyLimitMiddleware
from qdash.api.lifespan import lifespan
from qdash.api.request_context import RequestContextMiddleware
from qdash.api.routers import health
from qdash.api.setup import install_copilot
from qdash.copilot.demo_model import with_demo_model
from qdash.logging import configure_logging
from qdash.settings import Settings, get_settings


def create_app(settings: Settings | None = None, db: Database[dict[str, Any]] | None = None) -> FastAPI:
    """Build the app; ``settings`` defaults to the process configuration (with the demo model as the
    default when no configured model is usable: ``qdash.copilot.demo_model.fallback``)."""
    settings = settings or with_demo_model(get_settings())
    configure_logging(settings.logging.level, settings.logging.json_output)
    app = FastAPI(title="QDash Copilot", version=__version__, lifespan=lifespan)
    app.state.settings = settings
    if db is not None:
        app.state.db = db
    app.add_middleware(BodyLimitMiddleware)
    app.add_middleware(RequestContextMiddleware)
    app.include_router(health.router)
    install_copilot(app)
    return app
