"""Response models of the HTTP API, so the OpenAPI document describes every answer exactly.

Request bodies the assistant also takes live in ``qdash.copilot.requests``; these are the shapes
only the HTTP layer produces.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Block(BaseModel):
    """One block of an answer: markdown text or a Plotly figure (api-contract §5)."""

    type: Literal["text", "chart"]
    content: str | None
    chart: dict[str, Any] | None


class ExpectedImage(BaseModel):
    alt_text: str
    index: int


class ImagesSent(BaseModel):
    experiment_figure: bool
    experiment_figure_paths: list[str]
    expected_images: list[ExpectedImage]
    task_name: str


class BlocksResult(BaseModel):
    """The final answer; ``meta`` is ours and optional."""

    model_config = ConfigDict(extra="allow")

    blocks: list[Block] = Field(min_length=1)
    assessment: Literal["good", "warning", "bad"] | None = None
    meta: dict[str, Any] | None = None


class AnalysisResult(BlocksResult):
    images_sent: ImagesSent | None = None


class SessionMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant"]
    content: str
    attached_image: str | None = None
    created_at: datetime | None = None


class SessionSummary(BaseModel):
    session_id: str
    title: str
    context: dict[str, Any] | None
    message_count: int
    created_at: datetime
    updated_at: datetime


class SessionList(BaseModel):
    sessions: list[SessionSummary]


class SessionDetail(BaseModel):
    session_id: str
    title: str
    context: dict[str, Any] | None
    messages: list[SessionMessage]
    created_at: datetime
    updated_at: datetime


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: str = Field(min_length=1, max_length=200)
    title: str = Field("New Chat", max_length=500)
    context: dict[str, Any] | None = None
    messages: list[SessionMessage] = Field(default_factory=list)


class SessionPatch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    title: str | None = Field(None, max_length=500)
    context: dict[str, Any] | None = None
    messages: list[SessionMessage] | None = None


class Deleted(BaseModel):
    deleted: Literal[True] = True


class ErrorBody(BaseModel):
    """FastAPI's error shape: ``{"detail": "<text>"}``."""

    detail: str


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or invalid bearer token"},
    403: {"model": ErrorBody, "description": "disabled user or not a member of the project"},
}
