"""Proposing through the real tool pipeline, as a chat turn does, on any database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pymongo.database import Database

from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.output import output_data
from qdash.copilot.tools.spec import ToolContext
from qdash.engine.tool import ToolOutput
from qdash.models.answer import ApprovalBlock
from qdash.settings import Settings, load_settings
from tests.support.turn_tools import one_turn


def actions_settings(data_dir: Path, **actions: Any) -> Settings:
    return load_settings(
        database={"data_dir": str(data_dir), "mongo_uri": None}, actions={"enabled": True, **actions}
    )


ON = actions_settings(Path("var"))
"""Lab actions on (what a decision checks; the data dir is never opened)."""


async def call_tool(
    db: Database[dict[str, Any]],
    settings: Settings,
    tool: str,
    args: dict[str, Any],
    *,
    project: str,
    user: str,
    session: str | None = "s1",
) -> ToolOutput:
    """One call of ``tool`` through its executor (validation, guards, steps) in a chat turn."""
    service = CopilotDataService(ToolContext(db, project, user, settings, session, model="gpt-test"))
    executors = one_turn(service, chat=True)
    return await executors[tool](args)


def approval_of(output: ToolOutput) -> dict[str, Any]:
    """The approval block's payload of a proposal (the turn's last answer block)."""
    blocks = output_data(output).answer or []
    card = blocks[-1] if blocks else None
    assert output.ends_turn and isinstance(card, ApprovalBlock), blocks
    approval: dict[str, Any] = card.approval.model_dump()
    return approval
