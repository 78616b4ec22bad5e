"""Request bodies of the dashboard contract (docs/api.md), shared by the API and the assistant.

They live below the API so the assistant (and ``qdash ask``) can take the same objects without
knowing about HTTP.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

REQUEST_ID_DOC = (
    "sent by the newest upstream dashboard (a UUID per request); its presence selects that "
    "dashboard's event vocabulary (docs/api.md, 'Upstream dialect')"
)


class HistoryEntry(BaseModel):
    """One earlier turn as the UI resends it; assistant content may be a JSON-stringified result."""

    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant"]
    content: str


class ModelOverride(BaseModel):
    """Choose one of the configured models by alias; never a client-supplied URL or key."""

    model_config = ConfigDict(extra="ignore")

    alias: str | None = Field(None, description="configured model alias (copilot.models key)")
    name: str | None = Field(None, description="configured model name, matched against the catalogue")
    provider: str | None = Field(None, description="with name: only models of this provider match")


class ApprovalDecision(BaseModel):
    """The newest upstream dashboard's decision on an approval card (``approval: {id, approve}``)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=100)
    approve: bool


class ChatRequest(BaseModel):
    """``POST /copilot/chat/stream`` body; the chat page sends only message and history."""

    model_config = ConfigDict(extra="ignore")

    message: str = Field(min_length=1, max_length=16_000)
    chip_id: str | None = None
    qid: str | None = None
    conversation_history: list[HistoryEntry] = Field(default_factory=list, max_length=200)
    image_base64: str | None = None
    session_id: str | None = Field(None, max_length=200)
    model_override: ModelOverride | None = None
    request_id: str | None = Field(None, max_length=200, description=REQUEST_ID_DOC)
    approval: ApprovalDecision | None = Field(
        None,
        description="the user's decision on a proposed lab action (with actions.enabled; docs/actions.md)",
    )


class AnalyzeRequest(BaseModel):
    """``POST /copilot/analyze[/stream]`` body from the analysis sidebar (one task result)."""

    model_config = ConfigDict(extra="ignore")

    task_name: str = Field(min_length=1, max_length=200)
    chip_id: str = Field(min_length=1, max_length=200)
    qid: str = Field(max_length=200)
    execution_id: str = Field(min_length=1, max_length=200)
    task_id: str = Field(min_length=1, max_length=200)
    message: str = Field(min_length=1, max_length=16_000)
    image_base64: str | None = None
    conversation_history: list[HistoryEntry] = Field(default_factory=list, max_length=200)
    session_id: str | None = Field(None, max_length=200)
    model_override: ModelOverride | None = None
    request_id: str | None = Field(None, max_length=200, description=REQUEST_ID_DOC)
