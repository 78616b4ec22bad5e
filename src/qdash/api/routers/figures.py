"""``GET /copilot/figures/{figure_id}`` and ``GET /executions/figure?path=``: the PNG of a run figure
an answer refers to, by the run's id (our page) or by its stored path (the upstream dashboards,
which load figures from their own API route; their proxy forwards ``/api/executions/figure`` to
``/executions/figure``, an older rewrite to ``/api/executions/figure``: both are served).

Why authenticated and project-scoped (unlike ``/copilot/expected-image``, which serves packaged
reference pictures): a run figure is lab data. The id is the run's ``task_id``, looked up in the
caller's project only, so a member of another project gets the same 404 as for an id that does not
exist; a path is served only when a run of a project the caller may read recorded it (an
``<img src>`` cannot name the project); the file is read only inside the data dir or a
``lab.figure_roots`` directory (``qdash.copilot.run_figures``).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Path, Query, status
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from qdash.api.deps import AppSettings, CurrentPrincipal, Db, ImageProjects
from qdash.api.schemas import ERROR_RESPONSES, errors
from qdash.copilot.assistant import default_figures
from qdash.copilot.run_figures import load_figure_by_path, load_run_figure
from qdash.repositories.scope import ProjectScope

router = APIRouter(tags=["figures"])

NOT_FOUND = "Figure not found (no run with this id in your project has a readable PNG figure)"
PATH_NOT_FOUND = "Figure not found (no run of your project recorded a readable PNG at this path)"
PNG_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"content": {"image/png": {}}, "description": "the run's figure"},
    **ERROR_RESPONSES,
}


@router.get(
    "/copilot/figures/{figure_id}",
    response_class=Response,
    responses=errors({404: "no such run in the caller's project, or no figure"}, PNG_RESPONSES),
)
async def run_figure(
    *,
    figure_id: str = Path(min_length=1, max_length=200, description="the run's task_id"),
    principal: CurrentPrincipal,
    db: Db,
    settings: AppSettings,
) -> Response:
    """The figure's PNG; fetch it with the bearer token (the chat page turns it into a blob URL)."""
    scope = ProjectScope(db, principal.project_id)
    loader = default_figures(db, settings)
    png = await run_in_threadpool(
        load_run_figure, scope, figure_id, loader, settings.analysis.max_image_bytes
    )
    return _png(png, NOT_FOUND)


@router.get(
    "/executions/figure",
    response_class=Response,
    responses=errors({404: "no run of the caller's project recorded this path"}, PNG_RESPONSES),
)
@router.get("/api/executions/figure", response_class=Response, include_in_schema=False)
async def figure_by_path(
    *,
    path: str = Query(min_length=1, max_length=4096, description="the figure path a run recorded"),
    projects: ImageProjects,
    db: Db,
    settings: AppSettings,
) -> Response:
    """A run figure by its stored path, as upstream's own route serves it, but only a path a run of
    one of the caller's projects recorded. Bearer token as elsewhere, or the dashboard's
    ``access_token`` cookie (an ``<img src>`` sends no header); the project is ``X-Project-Id`` if
    sent, else any the caller may read (the page showing the figure sent no header)."""
    scopes = [ProjectScope(db, project) for project in projects]
    loader = default_figures(db, settings)
    png = await run_in_threadpool(
        load_figure_by_path, scopes, path, loader, settings.analysis.max_image_bytes
    )
    return _png(png, PATH_NOT_FOUND)


def _png(png: bytes | None, not_found: str) -> Response:
    if png is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, not_found)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})
