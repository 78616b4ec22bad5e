"""CopilotDataService: the tools of one (project, user, session), ready for the engine.

Why a service: the API knows who is asking (project from the request's scope, never from the
model) and which chat session this is; the engine only wants objects with the ``Tool`` protocol.
This class joins the two: it binds the registry's specs to implementations, gives every executor
the caller's context, one per-turn state (rate limit, breaker, charts) and the session's data store;
the analysis tool also gets the sandbox and the session's uploaded tables (``qdash.uploads``).
Build the executors once per turn: ``build_tool_executors()`` starts a fresh ``TurnState``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pymongo.database import Database

from qdash.copilot.tools.analysis import AnalysisTool, SandboxRunner, UploadTables
from qdash.copilot.tools.executor import ToolExecutor
from qdash.copilot.tools.registry import Impl, ToolRegistry, custom_tools, default_registry
from qdash.copilot.tools.spec import ToolContext
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.data_store import DataStore, MemoryDataStore, MongoDataStore
from qdash.settings import Settings

ANALYSIS_TOOL = "execute_python_analysis"


def default_implementations(
    settings: Settings, sandbox: SandboxRunner | None = None, uploads: UploadTables | None = None
) -> dict[str, Impl]:
    """The catalogue's implementations, the sandbox tool and the config-declared query tools."""
    from qdash.copilot.tools.catalog import IMPLEMENTATIONS

    _, custom = custom_tools(settings)
    return {**IMPLEMENTATIONS, ANALYSIS_TOOL: AnalysisTool(sandbox, uploads), **custom}


class CopilotDataService:
    """Tools bound to one caller: ``db`` + ``project_id`` + ``username`` (+ ``session_id``)."""

    def __init__(
        self,
        db: Database[dict[str, Any]],
        project_id: str,
        username: str,
        settings: Settings,
        session_id: str | None = None,
        *,
        registry: ToolRegistry | None = None,
        implementations: Mapping[str, Impl] | None = None,
        sandbox: SandboxRunner | None = None,
        uploads: UploadTables | None = None,
    ) -> None:
        if not project_id:
            raise ValueError("project_id is required: every tool query is scoped by project")
        self.db = db
        self.project_id = project_id
        self.username = username
        self.settings = settings
        self.session_id = session_id
        self.registry = registry if registry is not None else default_registry(settings)
        impls = (
            implementations
            if implementations is not None
            else default_implementations(settings, sandbox, uploads)
        )
        self.bound = self.registry.bind({name: impl for name, impl in impls.items() if name in self.registry})
        self.turn = TurnState()

    def data_store(self, turn: TurnState | None = None) -> DataStore:
        """The session's store in MongoDB, or the turn's in memory when there is no session id."""
        tools = self.settings.tools
        if self.session_id:
            return MongoDataStore(
                self.db,
                project_id=self.project_id,
                username=self.username,
                session_id=self.session_id,
                ttl_s=tools.data_store_ttl_s,
                max_bytes=tools.data_store_max_bytes,
                key_max_bytes=tools.data_store_key_max_bytes,
            )
        backing = (turn or self.turn).turn_data
        return MemoryDataStore(backing, tools.data_store_max_bytes, tools.data_store_key_max_bytes)

    def build_tool_executors(self, turn: TurnState | None = None) -> list[ToolExecutor]:
        """One executor per tool for a new turn (or for ``turn``); ``self.turn`` is that turn's state.

        Nothing here blocks: the store touches MongoDB only when a tool runs (on the tool pool).
        """
        self.turn = turn if turn is not None else TurnState()
        store = self.data_store(self.turn)
        ctx = ToolContext(
            db=self.db,
            project_id=self.project_id,
            username=self.username,
            settings=self.settings,
            session_id=self.session_id,
            store=store,
        )
        return [
            ToolExecutor(
                spec=spec,
                impl=self.bound[spec.name],
                parameters=self.registry.parameters(spec.name),
                ctx=ctx,
                turn=self.turn,
                store=store,
            )
            for spec in self.registry
        ]
