"""``GET /copilot/figures/{figure_id}``: the PNG of a run figure an answer refers to.

Why authenticated and project-scoped (unlike ``/copilot/expected-image``, which serves packaged
reference pictures): a run figure is lab data. The id is the run's ``task_id``, looked up in the
caller's project only, so a member of another project gets the same 404 as for an id that does not
exist; the file is read only inside the data dir or a ``lab.figure_roots`` directory
(``qdash.copilot.run_figures``).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Path, status
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from qdash.api.deps import AppSettings, CurrentPrincipal, Db
from qdash.api.schemas import ERROR_RESPONSES, ErrorBody
from qdash.copilot.assistant import default_figures
from qdash.copilot.run_figures import load_run_figure
from qdash.repositories.scope import ProjectScope

router = APIRouter(prefix="/copilot", tags=["figures"])

NOT_FOUND = "Figure not found (no run with this id in your project has a readable PNG figure)"


@router.get(
    "/figures/{figure_id}",
    response_class=Response,
    responses={
        200: {"content": {"image/png": {}}, "description": "the run's figure"},
        **ERROR_RESPONSES,
        404: {"model": ErrorBody, "description": "no such run in the caller's project, or no figure"},
    },
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
    if png is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})
