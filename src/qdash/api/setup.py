"""Attach the copilot API (routers and the chat page) to an app.

Why a separate function: ``app.py`` stays the db owner's small factory and calls this once; tests
build the same app and only swap ``app.state.assistant``.
"""

from __future__ import annotations

from fastapi import FastAPI

from qdash.api import ui
from qdash.api.routers import analyze, chat, config, models, sessions, tools


def install_copilot(app: FastAPI) -> None:
    """Include every copilot router and the static chat page under ``/copilot/ui``."""
    for module in (chat, analyze, sessions, config, models, tools):
        app.include_router(module.router)
    app.include_router(ui.router)
