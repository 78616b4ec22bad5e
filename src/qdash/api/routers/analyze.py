"""``POST /copilot/analyze/stream`` and ``POST /copilot/analyze``: the analysis sidebar (one task result).

The non-streaming endpoint runs the same pipeline and returns the result with ``images_sent``,
declared as its response model (upstream declared the legacy model and failed validation).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from starlette.concurrency import run_in_threadpool

from qdash.api import limits, runs
from qdash.api.deps import Copilot
from qdash.api.routers.chat import RUN_ERRORS, SSE_DOC, EventsMode
from qdash.api.schemas import errors
from qdash.api.sse import SSEResponse, result_payload
from qdash.api.stream_dialects import choose_vocabulary
from qdash.copilot.answer import finite
from qdash.copilot.requests import AnalyzeRequest
from qdash.engine.events import Failed
from qdash.models.answer import Answer

router = APIRouter(prefix="/copilot", tags=["analysis"])


@router.post("/analyze/stream", response_class=SSEResponse, status_code=200, responses=SSE_DOC)
async def analyze_stream(body: AnalyzeRequest, *, call: Copilot, events: EventsMode = None) -> SSEResponse:
    """Stream the analysis of one task result; cancelled when the client disconnects."""
    settings = call.settings
    runs.check_request(body, settings)
    lease = await runs.admit(call.db, call.principal, settings)
    enabled = settings.copilot.enabled
    run = call.assistant.analyze(call.principal, body) if enabled else runs.disabled_run("init")
    vocabulary = choose_vocabulary(events, body, settings)
    return runs.stream_response(
        run, db=call.db, lease_id=lease, settings=settings, mode="analysis", vocabulary=vocabulary
    )


@router.post(
    "/analyze",
    response_model=Answer,
    responses=errors({500: "Analysis failed: <reason>", 503: "Copilot is not enabled"}, RUN_ERRORS),
)
async def analyze(body: AnalyzeRequest, *, call: Copilot) -> dict[str, object]:
    """Run the analysis to the end and return the blocks result plus ``images_sent``."""
    runs.check_request(body, call.settings)
    if not call.settings.copilot.enabled:
        raise HTTPException(503, runs.DISABLED_DETAIL)
    lease = await runs.admit(call.db, call.principal, call.settings)
    try:
        terminal = await runs.run_to_end(
            call.assistant.analyze(call.principal, body), call.settings, "analysis"
        )
    finally:
        await run_in_threadpool(limits.release_lease, call.db, lease)
    if isinstance(terminal, Failed):
        raise HTTPException(503 if terminal.code == "disabled" else 500, terminal.detail)
    result: dict[str, object] = finite(result_payload(terminal))
    return result
