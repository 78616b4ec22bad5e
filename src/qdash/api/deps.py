"""FastAPI dependencies: the app's database, settings and assistant, and the authenticated caller.

Why dependencies: routers stay declarative, tests swap ``app.state.assistant`` for a fake, and
every blocking lookup (pymongo) runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypeVar

from fastapi import Cookie, Depends, Header, Request
from pymongo.database import Database
from starlette.concurrency import run_in_threadpool

from qdash.api import limits
from qdash.api.auth import AuthUser, Principal, authenticate, readable_projects, resolve_project
from qdash.db.server_record import OPERATOR_USER_HEADER
from qdash.repositories import sessions
from qdash.settings import Settings
from qdash.uploads import UploadStore

T = TypeVar("T")


class AssistantLike(Protocol):
    """What the routers need of ``qdash.copilot.assistant.Assistant`` (fakes implement the same)."""

    def chat(self, scope: Any, request: Any, decided: Any = None) -> Any: ...

    def analyze(self, scope: Any, request: Any) -> Any: ...


async def get_db(request: Request) -> Database[dict[str, Any]]:
    """The app's database; the API's own indexes are created (in a worker thread) once per database.

    The getters here are ``async``: a plain ``def`` dependency costs a thread hop per request, so a
    request pays hops only for real blocking work (auth lookup, limits, the run).
    """
    state = request.app.state
    db: Database[dict[str, Any]] = state.db
    if getattr(state, "copilot_indexes_for", None) is not db:
        await run_in_threadpool(ensure_api_indexes, db)
        state.copilot_indexes_for = db
    return db


def ensure_api_indexes(db: Database[dict[str, Any]]) -> None:
    limits.ensure_indexes(db)
    sessions.ensure_indexes(db)
    UploadStore.ensure_indexes(db)


async def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_assistant(request: Request) -> AssistantLike:
    """The app's assistant, created on first use from the app's database and settings.

    Built on the event loop (cheap: models, sandbox and figures are all lazy), so concurrent first
    requests cannot build two.
    """
    state = request.app.state
    assistant: AssistantLike | None = getattr(state, "assistant", None)
    if assistant is None:
        from qdash.copilot.assistant import Assistant

        assistant = Assistant(state.db, state.settings)
        state.assistant = assistant
    return assistant


Db = Annotated[Database[dict[str, Any]], Depends(get_db)]
AppSettings = Annotated[Settings, Depends(get_app_settings)]


def _operator(request: Request) -> tuple[str | None, str | None]:
    """The server's operator token and the user the local CLI names (``qdash.remote``), if any."""
    return getattr(request.app.state, "operator_token", None), request.headers.get(OPERATOR_USER_HEADER)


AuthorizationHeader = Annotated[str | None, Header(description="Bearer <token>")]
ProjectHeader = Annotated[
    str | None, Header(description="project to work in; default: the user's default project")
]


async def current_user(request: Request, db: Db, authorization: AuthorizationHeader = None) -> AuthUser:
    """The caller named by the bearer token (401/403 otherwise)."""
    return await run_in_threadpool(authenticate, db, authorization, *_operator(request))


async def current_principal(
    request: Request, db: Db, authorization: AuthorizationHeader = None, x_project_id: ProjectHeader = None
) -> Principal:
    """The caller plus the project this request is scoped to (401/403 otherwise); one thread hop."""
    operator = _operator(request)
    return await run_in_threadpool(_resolved, resolve_project, db, authorization, x_project_id, operator)


async def image_projects(
    request: Request,
    db: Db,
    authorization: AuthorizationHeader = None,
    x_project_id: ProjectHeader = None,
    access_token: Annotated[
        str | None, Cookie(description="the upstream dashboard's session token, when no header is sent")
    ] = None,
) -> list[str]:
    """The projects an image an upstream dashboard loads with ``<img src>`` may come from. A
    browser cannot add a header there, so the dashboard's ``access_token`` cookie (the same bearer
    token) stands in when no ``Authorization`` header came, and without ``X-Project-Id`` every
    project the caller may read is searched (``auth.readable_projects``): the chat that showed the
    figure may have run in a project other than the default."""
    if not authorization and access_token:
        authorization = f"Bearer {access_token}"
    operator = _operator(request)
    return await run_in_threadpool(_resolved, readable_projects, db, authorization, x_project_id, operator)


def _resolved(
    resolve: Callable[[Database[dict[str, Any]], AuthUser, str | None], T],
    db: Database[dict[str, Any]],
    authorization: str | None,
    project: str | None,
    operator: tuple[str | None, str | None],
) -> T:
    """The caller's token checked, then the requested project resolved (both blocking)."""
    return resolve(db, authenticate(db, authorization, *operator), project)


CurrentUser = Annotated[AuthUser, Depends(current_user)]
CurrentPrincipal = Annotated[Principal, Depends(current_principal)]
ImageProjects = Annotated[list[str], Depends(image_projects)]
Assistant = Annotated[AssistantLike, Depends(get_assistant)]


@dataclass(frozen=True)
class CopilotCall:
    """What every copilot run endpoint (chat, analysis, a tool call) works with: one dependency, so
    the four parameters are declared once instead of in each endpoint's signature."""

    principal: Principal
    db: Database[dict[str, Any]]
    settings: Settings
    assistant: AssistantLike


async def copilot_call(
    principal: CurrentPrincipal, db: Db, settings: AppSettings, assistant: Assistant
) -> CopilotCall:
    return CopilotCall(principal, db, settings, assistant)


Copilot = Annotated[CopilotCall, Depends(copilot_call)]
