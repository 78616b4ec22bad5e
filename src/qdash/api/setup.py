"""Attach the copilot API (routers and the chat page) to an app.

Why a separate function: ``app.py`` stays the db owner's small factory and calls this once; tests
build the same app and only swap ``app.state.assistant``.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from starlette.responses import JSONResponse, Response

from qdash.api import ui
from qdash.api.routers import (
    actions,
    analyze,
    chat,
    config,
    feedback,
    figures,
    models,
    reviews,
    sessions,
    tools,
    uploads,
)
from qdash.repositories.refused import RefusedError

MAX_ECHO_CHARS = 200
"""A 422 repeats an offending input only up to this size: a 10 MB message is not sent back."""


def install_copilot(app: FastAPI) -> None:
    """Include every copilot router and the static chat page under ``/copilot/ui``."""
    routers = (chat, analyze, sessions, feedback, config, models, tools, uploads, figures, reviews, actions)
    for module in routers:
        app.include_router(module.router)
    app.include_router(ui.router)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(RefusedError, refused)


def _without_long_input(error: dict[str, Any]) -> dict[str, Any]:
    value = error.get("input")
    size = len(value) if isinstance(value, str) else len(json.dumps(value, default=str))
    return error if size <= MAX_ECHO_CHARS else {k: v for k, v in error.items() if k != "input"}


async def validation_error(request: Request, exc: Exception) -> Response:
    """FastAPI's 422 body, encoded ASCII-safe, without echoing large inputs.

    The default handler echoes the offending input as UTF-8 and fails (500) when that input holds
    a lone surrogate, which is a legal JSON escape; ``ensure_ascii`` keeps it an escape. An input
    over ``MAX_ECHO_CHARS`` is dropped from its error (``loc`` and ``msg`` still say what is wrong).
    """
    errors = [_without_long_input(e) for e in exc.errors()] if isinstance(exc, RequestValidationError) else []
    body = json.dumps({"detail": jsonable_encoder(errors)}, ensure_ascii=True, default=str)
    return Response(body, status_code=422, media_type="application/json")


async def refused(request: Request, exc: Exception) -> Response:
    """A stored rule's refusal (a session, an approval): its status and ``{"detail": …}``, the body
    an ``HTTPException`` has."""
    if not isinstance(exc, RefusedError):
        raise exc
    return JSONResponse({"detail": exc.detail}, status_code=exc.status)
