"""``GET /copilot/config`` (what the UI needs, never keys, URLs or prompts) and
``GET /copilot/expected-image`` (reference figures of a good result, used as ``<img src>``; where they
come from is ``qdash.copilot.references``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import FileResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from qdash.api.auth import list_projects
from qdash.api.deps import AppSettings, CurrentUser, Db
from qdash.api.schemas import ERROR_RESPONSES, errors
from qdash.copilot.references import reference_image_path
from qdash.settings import CopilotSettings, ModelSettings

router = APIRouter(prefix="/copilot", tags=["config"])


class PublicModel(BaseModel):
    provider: str
    name: str
    temperature: float | None
    max_output_tokens: int


class ChatModel(BaseModel):
    alias: str
    provider: str
    name: str


class Score(BaseModel):
    good: float
    excellent: float
    bad: float | None
    unit: str
    higher_is_better: bool


class SuggestionOut(BaseModel):
    label: str
    prompt: str


class AnalysisOut(BaseModel):
    enabled: bool
    multimodal: bool
    max_conversation_turns: int


class PublicConfig(BaseModel):
    enabled: bool
    thinking_language: str
    response_language: str
    model: PublicModel
    chat_models: list[ChatModel]
    evaluation_metrics: dict[str, list[str]]
    scoring: dict[str, Score]
    initial_message: str
    suggestions: list[SuggestionOut]
    analysis: AnalysisOut


def chat_models_default_first(copilot: CopilotSettings) -> list[tuple[str, ModelSettings]]:
    """The configured models, the default first: both upstream dashboards' model menus label
    ``chat_models[0]`` "Configured: <name>" and send ``model_override: null`` for it, which runs
    ``copilot.default_model`` (``docs/upstream-dashboard-stream.md``, "Model menu")."""
    default = copilot.default_model
    return [(default, copilot.models[default])] + [
        (alias, model) for alias, model in copilot.models.items() if alias != default
    ]


@router.get("/config", response_model=PublicConfig, responses=ERROR_RESPONSES)
async def get_config(user: CurrentUser, settings: AppSettings) -> dict[str, Any]:
    """Public configuration; a disabled copilot still answers with ``enabled: false``."""
    copilot = settings.copilot
    default = copilot.models[copilot.default_model]
    return {
        "enabled": copilot.enabled,
        "thinking_language": copilot.thinking_language,
        "response_language": copilot.response_language,
        "model": {
            "provider": default.provider,
            "name": default.name,
            "temperature": default.temperature,
            "max_output_tokens": default.max_output_tokens,
        },
        "chat_models": [
            {"alias": alias, "provider": m.provider, "name": m.name}
            for alias, m in chat_models_default_first(copilot)
        ],
        "evaluation_metrics": copilot.evaluation_metrics,
        "scoring": {
            key: {
                "good": s.good,
                "excellent": s.excellent,
                "bad": s.bad,
                "unit": s.unit,
                "higher_is_better": s.higher_is_better,
            }
            for key, s in settings.scoring.items()
        },
        "initial_message": copilot.initial_message,
        "suggestions": [{"label": s.label, "prompt": s.prompt} for s in copilot.suggestions],
        "analysis": {
            "enabled": settings.analysis.enabled,
            "multimodal": settings.analysis.multimodal,
            "max_conversation_turns": settings.analysis.max_conversation_turns,
        },
    }


class ProjectOut(BaseModel):
    project_id: str
    name: str
    role: str


class ProjectList(BaseModel):
    username: str
    current: str | None
    projects: list[ProjectOut]


@router.get("/projects", response_model=ProjectList, responses=ERROR_RESPONSES)
async def get_projects(user: CurrentUser, db: Db) -> dict[str, Any]:
    """The caller's projects (ours; the chat page's project selector). ``current`` is the default."""
    projects = await run_in_threadpool(list_projects, db, user.username)
    ids = {p["project_id"] for p in projects}
    current = user.default_project_id if user.default_project_id in ids else None
    if current is None and projects:
        current = projects[0]["project_id"]
    return {"username": user.username, "current": current, "projects": projects}


@router.get(
    "/expected-image",
    response_class=FileResponse,
    responses={
        200: {"content": {"image/png": {}}, "description": "reference figure"},
        **errors({404: "no such image"}, {}),
    },
)
def expected_image(
    settings: AppSettings,
    task_name: str = Query(min_length=1, max_length=100),
    index: int = Query(0, ge=0, le=99),
) -> FileResponse:
    """Reference image ``index`` of ``task_name``; no auth (the UI uses it as ``<img src>``).

    A plain ``def``: FastAPI runs it in a worker thread, so the file-system checks and the first
    rendering of a demo reference figure (matplotlib, ~0.1 s) stay off the loop.
    """
    path = reference_image_path(settings.config_dir, settings.database.data_dir, task_name, index)
    if path is None:
        raise HTTPException(404, "Expected image not found")
    return FileResponse(path, media_type="image/png")
