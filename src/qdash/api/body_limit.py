"""Request bodies over a size limit are refused with a short 413 before anything reads them.

Why a middleware and not the routes: a body is parsed (and a 422 built from it) before any
endpoint code runs, so a 100 MB JSON body used to be read, validated and echoed back whole. The
limit is ``api.max_body_bytes``; CSV uploads (``POST /copilot/uploads``) have ``uploads.max_bytes``
plus room for the multipart framing, and their route keeps its own exact check.

A declared ``Content-Length`` over the limit is answered at once without reading a byte. Otherwise
Starlette's ``RequestBodyLimitMiddleware`` counts the chunks as the route reads them (a chunked body
has no length to check) and FastAPI turns its error into the same JSON 413. The limits are read
from ``app.state.settings`` per request, as every other setting is.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from qdash.settings import Settings

TOO_LARGE = "Content Too Large"
"""Starlette's detail for a body that passes the limit while streaming; ours says the same."""

UPLOAD_PATH = "/copilot/uploads"
MULTIPART_SLACK = 64 * 1024
"""Room for the multipart framing and form fields around an upload of ``uploads.max_bytes``."""


def body_limit(settings: Settings, method: str, path: str) -> int:
    """The largest body this request may carry."""
    if method == "POST" and path == UPLOAD_PATH:
        return settings.uploads.max_bytes + MULTIPART_SLACK
    return settings.api.max_body_bytes


class BodyLimitMiddleware:
    """413 ``{"detail": "Content Too Large"}`` for a body over ``body_limit`` (module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.app
        if scope["type"] == "http":
            limit = body_limit(scope["app"].state.settings, scope["method"], scope["path"])
            declared = Headers(scope=scope).get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                app = JSONResponse({"detail": TOO_LARGE}, status_code=413)
            else:
                app = RequestBodyLimitMiddleware(app, limit)
        await app(scope, receive, send)
