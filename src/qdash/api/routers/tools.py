"""``GET /copilot/tools`` and ``POST /copilot/tools/{name}`` (ours): the calibration tools, called directly.

Why: lab engineers and tests can see exactly what the model sees of a tool, with the caller's
project (never a project from the arguments) and the same wrappers (validation, rate limit,
breaker, data store, chart interception, size guard) as in a chat turn.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Query
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from qdash.api import limits
from qdash.api.deps import Copilot, CopilotCall
from qdash.api.schemas import ERROR_RESPONSES, errors
from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.output import output_data
from qdash.copilot.tools.spec import ToolContext
from qdash.uploads import UploadStore

router = APIRouter(prefix="/copilot/tools", tags=["tools"])


class ToolInfo(BaseModel):
    name: str
    label: str
    description: str
    parameters: dict[str, Any]


class ToolList(BaseModel):
    tools: list[ToolInfo]


class ToolCallResult(BaseModel):
    tool: str
    is_error: bool
    output: Any
    """The JSON the model would see (a summary for results kept in the data store)."""
    charts: list[dict[str, Any]]


def _service(call: CopilotCall, session_id: str | None) -> CopilotDataService:
    """The caller's tools, with the assistant's sandbox (so analysis code runs as in a chat turn)."""
    return CopilotDataService(
        ToolContext(
            call.db,
            call.principal.project_id,
            call.principal.username,
            call.settings,
            session_id,
            sandbox=getattr(call.assistant, "sandbox", None),
            uploads=UploadStore(call.db, call.settings.uploads),
        )
    )


@router.get("", response_model=ToolList, responses=ERROR_RESPONSES)
async def list_tools(call: Copilot) -> ToolList:
    """The tools in the order the model sees them, with their strict argument schemas."""
    return ToolList(
        tools=[
            ToolInfo(name=t.name, label=t.label, description=t.description, parameters=t.parameters)
            for t in _service(call, None).tools()
        ]
    )


@router.post(
    "/{name}",
    response_model=ToolCallResult,
    responses=errors({404: "Unknown tool", 429: "rate limit"}),
)
async def call_tool(
    name: str,
    *,
    call: Copilot,
    arguments: Annotated[dict[str, Any], Body(description="the tool's arguments object")],
    session_id: Annotated[str | None, Query(max_length=200, description="data-store scope")] = None,
) -> ToolCallResult:
    """Run one tool for the caller's project; tool failures are a 200 with ``is_error`` and the error JSON."""
    service = _service(call, session_id)
    names = [t.name for t in service.tools()]
    if name not in names:
        raise HTTPException(404, f"Unknown tool: {name}. Available tools: {', '.join(names)}")
    await run_in_threadpool(
        limits.check_rate, call.db, call.principal.username, call.settings.api.chat_requests_per_minute
    )
    output = await service.call(name, arguments)
    data = output_data(output)
    shown = data.shown if data.shown is not None else json.loads(output.model_text)
    return ToolCallResult(tool=name, is_error=output.is_error, output=shown, charts=data.charts)
