"""``POST /copilot/analyze/stream`` and ``POST /copilot/analyze``: the analysis sidebar (one task result).

The non-streaming endpoint runs the same pipeline and returns the result with ``images_sent``,
declared as its response model (upstream declared the legacy model and failed validation).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from starlette.concurrency import run_in_threadpool

from qdash.api import limits, runs
from qdash.api.deps import AppSettings, Assistant, CurrentPrincipal, Db
from qdash.api.routers.chat import RUN_ERRORS, SSE_DOC, EventsMode
from qdash.api.schemas import AnalysisResult, ErrorBody
from qdash.api.sse import SSEResponse, json_safe, result_payload
from qdash.api.stream_dialects import choose_vocabulary
from qdash.copilot.requests import AnalyzeRequest
from qdash.engine.events import Failed

router = APIRouter(prefix="/copilot", tags=["analysis"])


@router.post("/analyze/stream", response_class=SSEResponse, status_code=200, responses=SSE_DOC)
async def analyze_stream(
    body: AnalyzeRequest,
    *,
    principal: CurrentPrincipal,
    db: Db,
    settings: AppSettings,
    assistant: Assistant,
    events: EventsMode = None,
) -> SSEResponse:
    """Stream the analysis of one task result; cancelled when the client disconnects."""
    runs.check_request(body, settings)
    lease = await runs.admit(db, principal, settings)
    run = runs.disabled_run("init") if not settings.copilot.enabled else assistant.analyze(principal, body)
    vocabulary = choose_vocabulary(events, body, settings)
    return runs.stream_response(
        run, db=db, lease_id=lease, settings=settings, mode="analysis", vocabulary=vocabulary
    )


@router.post(
    "/analyze",
    response_model=AnalysisResult,
    responses={
        **RUN_ERRORS,
        500: {"model": ErrorBody, "description": "Analysis failed: <reason>"},
        503: {"model": ErrorBody, "description": "Copilot is not enabled"},
    },
)
async def analyze(
    body: AnalyzeRequest,
    *,
    principal: CurrentPrincipal,
    db: Db,
    settings: AppSettings,
    assistant: Assistant,
) -> dict[str, object]:
    """Run the analysis to the end and return the blocks result plus ``images_sent``."""
    runs.check_request(body, settings)
    if not settings.copilot.enabled:
        raise HTTPException(503, runs.DISABLED_DETAIL)
    lease = await runs.admit(db, principal, settings)
    try:
        terminal = await runs.run_to_end(assistant.analyze(principal, body), settings, "analysis")
    finally:
        await run_in_threadpool(limits.release_lease, db, lease)
    if isinstance(terminal, Failed):
        raise HTTPException(503 if terminal.code == "disabled" else 500, terminal.detail)
    result: dict[str, object] = json_safe(result_payload(terminal))
    return result
