"""The implementation of ``execute_python_analysis``: session data + uploads → the sandbox.

Why here (and the spec in the catalogue): the model-facing contract is a tool like the others, but
running it needs the session's data store and uploaded tables, which only this layer sees. The
code never runs in this process: the sandbox (``qdash.sandbox``) gets JSON and returns JSON
``{output, error, chart}``; charts are then intercepted by the executor like any other chart.
``data`` is a private copy: stored tool results by key (``data["t1"]``, ``data["chip_summary"]``)
over uploaded tables by name, so code cannot change the store.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel

from qdash.copilot.tools.spec import ToolContext, ToolError
from qdash.engine.pool import run_blocking


class SandboxReply(Protocol):
    def to_dict(self) -> dict[str, Any]:
        """``{"output": str|None, "error": str|None, "chart": …}``."""
        ...


class SandboxRunner(Protocol):
    """What we need of ``qdash.sandbox.SandboxPool``: run code over data, never raise for code."""

    async def run(self, code: str, data: dict[str, Any] | None = None) -> SandboxReply: ...


class UploadTables(Protocol):
    """What we need of ``qdash.uploads.UploadStore``: a session's tables as lists of row dicts
    (blocking; called on the tool pool)."""

    def load_rows(
        self, project_id: str, username: str, session_id: str
    ) -> dict[str, list[dict[str, Any]]]: ...


class AnalysisTool:
    """``impl(ctx, args)`` for ``execute_python_analysis`` (asynchronous: it awaits the sandbox)."""

    def __init__(self, sandbox: SandboxRunner | None, uploads: UploadTables | None = None) -> None:
        self.sandbox = sandbox
        self.uploads = uploads

    def data_for(self, ctx: ToolContext) -> dict[str, Any]:
        """What the code sees as ``data`` (blocking: reads MongoDB)."""
        data: dict[str, Any] = {}
        if self.uploads is not None and ctx.session_id:  # uploads belong to a chat session
            data.update(self.uploads.load_rows(ctx.project_id, ctx.username, ctx.session_id))
        if ctx.store is not None:
            data.update(ctx.store.snapshot())
        return data

    async def __call__(self, ctx: ToolContext, args: BaseModel) -> dict[str, Any]:
        if self.sandbox is None:
            raise ToolError(
                "Sandbox unavailable: no sandbox is running in this service",
                "answer from the other tools' results without computation",
            )
        code = str(args.model_dump()["code"])
        data = await run_blocking(self.data_for, ctx)
        reply = await self.sandbox.run(code, data)
        return reply.to_dict()
