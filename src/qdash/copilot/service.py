"""CopilotDataService: the tools of one (project, user, session), ready for the engine.

Why a service: the API knows who is asking (project from the request's scope, never from the
model) and which chat session this is; the engine only wants objects with the ``Tool`` protocol and
the turn's state to hand them. The tools are the registry's, made once per configuration; what
this class makes per turn is the state (``new_turn``: the caller's context with the sandbox and the
session's uploaded tables, ``qdash.uploads``, for the analysis tool, the session's data store, the
breaker's counts and the collected charts), which the engine passes to every call as
``RunContext.deps``. ``call`` runs one tool outside a model turn under the engine's own timeout and
failure policy, so the tools endpoint, ``qdash tools call`` and the chat's preload behave as a
model's call does.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from qdash.copilot.tools.executor import ToolExecutor
from qdash.copilot.tools.registry import ToolRegistry, default_registry
from qdash.copilot.tools.spec import ToolContext
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.data_store import DataStore, MemoryDataStore, MongoDataStore
from qdash.engine.execution import ToolRunner
from qdash.engine.items import FunctionCall
from qdash.engine.tool import RunContext, ToolOutput

ANALYSIS_TOOL = "execute_python_analysis"


class CopilotDataService:
    """Tools bound to one caller: ``db`` + ``project_id`` + ``username`` (+ ``session_id``)."""

    def __init__(self, context: ToolContext, *, registry: ToolRegistry | None = None) -> None:
        self.context = context
        """The caller's context; each turn's state gets it with that turn's data store."""
        self.registry = registry if registry is not None else default_registry(context.settings)

    def data_store(self) -> DataStore:
        """The session's store in MongoDB, or a new one in memory (one turn's) without a session id.

        Nothing here blocks: the store touches MongoDB only when a tool runs (on the tool pool)."""
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
        return MemoryDataStore({}, tools.data_store_max_bytes, tools.data_store_key_max_bytes)

    def new_turn(self) -> TurnState:
        """The state of a new turn: the engine hands it to every tool call as ``RunContext.deps``."""
        store = self.data_store()
        return TurnState(replace(self.context, store=store), store)

    def run_context(self) -> RunContext[TurnState]:
        """A new turn for calls made outside a model turn (``call``): share it across them."""
        return RunContext(self.new_turn())

    def tools(self, *, chat: bool = False) -> list[ToolExecutor]:
        """The registry's tools (``ask_user`` only for a chat turn): shared, never rebuilt per turn."""
        return self.registry.tools(chat=chat)

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        run: RunContext[TurnState] | None = None,
        *,
        chat: bool = False,
    ) -> ToolOutput:
        """One tool call outside a model turn (in ``run``, else a new turn), under the engine's
        timeout and failure policy; an unknown name is an error output naming the known ones."""
        runner = ToolRunner(
            self.tools(chat=chat),
            run if run is not None else self.run_context(),
            timeout_s=self.context.settings.tools.timeout_s,
        )
        call = FunctionCall(f"call_{name}", name, json.dumps(arguments, ensure_ascii=False, default=str))
        [result] = await runner.run_batch([call])
        return result.output
