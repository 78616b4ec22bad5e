"""The built-in chat page at ``/copilot/ui``: static files shipped as package data, no build step.

Plotly is served from the installed plotly package (``plotly/package_data/plotly.min.js``), never
from a CDN, so the page works on an air-gapped lab network.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse
from starlette.concurrency import run_in_threadpool

from qdash.api.deps import Db
from qdash.api.ui.welcome import Welcome, demo_users

router = APIRouter(prefix="/copilot/ui", include_in_schema=False)

UI_DIR = Path(__file__).resolve().parent
_ASSETS = {
    "api.js": "text/javascript",
    "app.js": "text/javascript",
    "render.js": "text/javascript",
    "reviews.js": "text/javascript",
    "trace.js": "text/javascript",
    "markdown.js": "text/javascript",
    "welcome.js": "text/javascript",
    "style.css": "text/css",
}
_CACHE = {"Cache-Control": "no-cache"}


def plotly_js_path() -> Path:
    """Where the installed plotly package keeps its bundled ``plotly.min.js``."""
    return Path(str(resources.files("plotly") / "package_data" / "plotly.min.js"))


@router.get("")
async def page() -> FileResponse:
    return FileResponse(UI_DIR / "index.html", media_type="text/html", headers=_CACHE)


@router.get("/plotly.min.js")
async def plotly_js() -> FileResponse:
    return FileResponse(
        plotly_js_path(), media_type="text/javascript", headers={"Cache-Control": "public, max-age=86400"}
    )


@router.get("/welcome", response_model=Welcome)
async def welcome(db: Db) -> Welcome:
    """The demo users (one click signs in) when the server runs the demo lab; none otherwise."""
    return Welcome(demo_users=await run_in_threadpool(demo_users, db))


@router.get("/{name}")
async def asset(name: str) -> FileResponse:
    if name not in _ASSETS:
        raise HTTPException(404, "Not found")
    return FileResponse(UI_DIR / name, media_type=_ASSETS[name], headers=_CACHE)
