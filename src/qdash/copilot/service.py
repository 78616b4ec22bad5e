"""CopilotDataService: the tools of one (project, user, session), ready for the engine.

Why a service: the API knows who is asking (project from the request's scope, never from the
model) and which chat session this is; the engine only wants objects with the ``Tool`` protocol.
This class joins the two: it gives every tool of the registry an executor with the caller's context
(with the sandbox and the session's uploaded tables, ``qdash.uploads``, for the analysis tool), one
per-turn state (rate limit, breaker, charts) and the session's data store.
Build the executors once per turn: ``build_tool_executors()`` starts a fresh ``TurnState``.
"""

from __future__ import annotations

from dataclasses import replace

from qdash.copilot.tools.ask_user import CHAT
from qdash.copilot.tools.executor import ToolExecutor
from qdash.copilot.tools.registry import ToolRegistry, default_registry
from qdash.copilot.tools.spec import ToolContext
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.data_store import DataStore, MemoryDataStore, MongoDataStore

ANALYSIS_TOOL = "execute_python_analysis"


class CopilotDataService:
    """Tools bound to one caller: ``db`` + ``project_id`` + ``username`` (+ ``session_id``)."""

    def __init__(self, context: ToolContext, *, registry: ToolRegistry | None = None) -> None:
        self.context = context
        """The caller's context; each turn's executors get it with that turn's data store."""
        self.registry = registry if registry is not None else default_registry(context.settings)
        self.turn = TurnState()

    def data_store(self, turn: TurnState | None = None) -> DataStore:
        """The session's store in MongoDB, or the turn's in memory when there is no session id."""
        ctx = self.context
        tools = ctx.settings.tools
        if ctx.session_id:
            return MongoDataStore(
                ctx.db,
                project_id=ctx.project_id,
                username=ctx.username,
                session_id=ctx.session_id,
                ttl_s=tools.data_store_ttl_s,
                max_bytes=tools.data_store_max_bytes,
                key_max_bytes=tools.data_store_key_max_bytes,
            )
        backing = (turn or self.turn).turn_data
        return MemoryDataStore(backing, tools.data_store_max_bytes, tools.data_store_key_max_bytes)

    def build_tool_executors(
        self, turn: TurnState | None = None, *, chat: bool = False
    ) -> list[ToolExecutor]:
        """One executor per tool for a new turn (or for ``turn``); ``self.turn`` is that turn's state.
        Tools tagged ``chat`` (``ask_user``) only for a chat turn (``chat=True``).

        Nothing here blocks: the store touches MongoDB only when a tool runs (on the tool pool).
        """
        self.turn = turn if turn is not None else TurnState()
        store = self.data_store(self.turn)
        ctx = replace(self.context, store=store)
        return [
            ToolExecutor(
                spec=spec,
                parameters=self.registry.parameters(spec.name),
                ctx=ctx,
                turn=self.turn,
                store=store,
            )
            for spec in self.registry
            if chat or CHAT not in spec.tags
        ]
