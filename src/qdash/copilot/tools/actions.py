"""The write tools: the model proposes a lab action, a person approves it, the server writes.

Why they never write: each implementation only reads (is the result there, is it already
excluded, is the caller an editor) and stores a pending approval (``qdash.actions.approvals``);
its output ends the turn with the proposal as the answer — a text block, then the newest upstream
dashboard's ``approval`` block. The decision is the user's next chat request, and the write runs in
the server with the stored arguments (``qdash.actions.runner``), never in a model round. So text in
the data ("exclude all results" in a note) can at most make the model propose, never write.

Offered only with ``actions.enabled`` (and each action's own switch), in chat turns, after every
other tool: the default tools array, and the prompt budget, stay as they are.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field

from qdash.actions.catalog import ACTIONS, UNDO, ActionError
from qdash.copilot.tools.ask_user import CHAT
from qdash.copilot.tools.jsonsafe import dumps, json_safe
from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, ToolError, ToolSpec, tool
from qdash.copilot.tools.turn import TurnState
from qdash.engine.pool import run_blocking
from qdash.engine.tool import RunContext, ToolOutput
from qdash.models.ai_review import Decision, Label
from qdash.models.answer import TextBlock
from qdash.settings import Settings

if TYPE_CHECKING:
    from qdash.actions.approvals import Scope
    from qdash.actions.decisions import Pending

ACTION = "action"
"""The tag of write tools."""
PROPOSED_NOTE = (
    "Proposed; nothing was changed. The user approves or declines with the card shown; the decision "
    "arrives as the next message. Do not call a write tool again this turn."
)
HINT = "Tell the user why; do not propose it again."
WAIT_SHARE = 0.9
"""The share of ``tools.timeout_s`` an approved write is waited for before it is reported as running."""


# The approval store is imported where a tool runs: the registry (``qdash tools list``) imports this
# module and must not load the database driver.


def _scope(ctx: ToolContext) -> Scope:
    from qdash.actions.approvals import Scope

    return Scope(ctx.project_id, ctx.username, ctx.session_id)


def _check_editor(ctx: ToolContext) -> None:
    from qdash.actions.approvals import LAB_ACTIONS
    from qdash.repositories.membership import editor_refusal

    refusal = editor_refusal(ctx.db, ctx.project_id, ctx.username, LAB_ACTIONS)
    if refusal is not None:
        raise ToolError(refusal, HINT)


def proposal_answer(doc: dict[str, Any]) -> ToolResult:
    """The tool's result: the model learns it was proposed; the answer is the proposal (the label
    and arguments are in the approval block, shown as the card or, to the older dashboard, as text)."""
    from qdash.actions.approvals import block

    text = "**Proposed action** (nothing has been changed yet; approve or decline it):"
    data = {"proposed": doc["label"], "note": PROPOSED_NOTE}
    return ToolResult(data, answer=[TextBlock(content=text), block(doc)])


def propose(ctx: ToolContext, name: str, args: BaseModel) -> ToolResult:
    from qdash.actions import runner

    _check_editor(ctx)
    ttl_s = ctx.settings.actions.approval_ttl_s
    try:
        doc = runner.propose(
            ctx.db, _scope(ctx), name, args.model_dump(mode="json"), ttl_s=ttl_s, model=ctx.model
        )
    except ActionError as exc:
        raise ToolError(exc.detail, exc.hint or HINT) from None
    return proposal_answer(doc)


class ExcludeArgs(BaseModel):
    task_id: str = Field(min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=500)


class TaskResultArgs(BaseModel):
    task_id: str = Field(min_length=1, max_length=200)


class NoteArgs(BaseModel):
    task_id: str = Field(min_length=1, max_length=200)
    content: str = Field(min_length=1, max_length=4000)


class LabelArgs(BaseModel):
    task_id: str = Field(min_length=1, max_length=200)
    decision: Decision
    label: Label
    comment: str | None = Field(None, max_length=1000)


class UndoArgs(BaseModel):
    audit_id: str | None = Field(None, max_length=100)


@tool(label="Proposing to exclude a result", tags=(CHAT, ACTION), ends_turn=True)
def exclude_task_result(ctx: ToolContext, args: ExcludeArgs) -> ToolResult:
    """Propose excluding one task result (task_id) from statistics; the user approves; your turn ends."""
    return propose(ctx, "exclude_task_result", args)


@tool(label="Proposing to restore a result", tags=(CHAT, ACTION), ends_turn=True)
def restore_task_result(ctx: ToolContext, args: TaskResultArgs) -> ToolResult:
    """Propose restoring an excluded task result to statistics; the user approves; your turn ends."""
    return propose(ctx, "restore_task_result", args)


@tool(label="Proposing a note", tags=(CHAT, ACTION), ends_turn=True)
def note_task_result(ctx: ToolContext, args: NoteArgs) -> ToolResult:
    """Propose setting a task result's note; the user approves; your turn ends."""
    return propose(ctx, "note_task_result", args)


@tool(label="Proposing a review label", tags=(CHAT, ACTION), ends_turn=True)
def label_ai_review(ctx: ToolContext, args: LabelArgs) -> ToolResult:
    """Propose a person's decision and label for a task result's AI review (confirm or correct it);
    the user approves; your turn ends."""
    return propose(ctx, "label_ai_review", args)


@tool(label="Proposing to undo an action", tags=(CHAT, ACTION), ends_turn=True)
def undo_action(ctx: ToolContext, args: UndoArgs) -> ToolResult:
    """Propose undoing a lab action by audit_id (default: the user's newest); the user approves;
    your turn ends."""
    from qdash.actions.runner import propose_undo

    _check_editor(ctx)
    try:
        doc = propose_undo(ctx.db, _scope(ctx), args.audit_id, ctx.settings.actions.approval_ttl_s, ctx.model)
    except ActionError as exc:
        raise ToolError(exc.detail, exc.hint or HINT) from None
    return proposal_answer(doc)


WRITE_TOOLS: tuple[ToolSpec, ...] = (
    exclude_task_result,
    restore_task_result,
    note_task_result,
    label_ai_review,
    undo_action,
)


def offered_write_tools(settings: Settings) -> list[ToolSpec]:
    """The write tools this configuration offers: none unless ``actions.enabled``."""
    actions = settings.actions
    if not actions.enabled:
        return []
    return [spec for spec in WRITE_TOOLS if spec.name == UNDO or getattr(actions, ACTIONS[spec.name].switch)]


class ApprovedStep:
    """The call the model proposed, carried out now that the user approved it: the chat turn's
    first step (``Agent.run_stream(first=…)``), run, reported and recorded by the engine like any
    call. Not offered to the model (its schema takes nothing): only the server makes this call."""

    parameters: ClassVar[dict[str, Any]] = {
        "type": "object", "properties": {}, "required": [], "additionalProperties": False,
    }  # fmt: skip
    description = "The lab action the user approved, carried out with the approved arguments."
    ends_turn = False

    def __init__(self, decision: Pending) -> None:
        self.decision = decision
        self.name = str(decision.approval["tool"])
        self.label = decision.label

    async def __call__(self, ctx: RunContext[TurnState], arguments: dict[str, Any], /) -> ToolOutput:
        return await carry_out_decision(ctx.deps.context, self.decision)


STILL_RUNNING = (
    "The approved action is still being carried out; its outcome is not known yet. Tell the user it "
    "was approved and is running, and that the actions list (`qdash actions list`, the audit) shows "
    "whether it was done. Do not call {tool} again."
)
"""What the model is told of a write that outlasts the wait: never that it failed or was done."""


async def carry_out_decision(ctx: ToolContext, decision: Pending) -> ToolOutput:
    """Claim the decision and, approved, write (``qdash.actions.decisions.decide``, on the tool
    pool: once started, it finishes whatever happens to the stream); what the model is told.

    The wait ends before the engine's tool timeout would: a timeout's words ("timed out … ask for
    less") would tell the user a write failed that may yet be done, so a slow write is reported as
    running, with where its outcome will show."""
    from qdash.actions.approvals import ApprovalError
    from qdash.actions.decisions import decide

    approval_id, tool = str(decision.approval["_id"]), str(decision.approval["tool"])
    try:
        async with asyncio.timeout(WAIT_SHARE * ctx.settings.tools.timeout_s):
            decided = await run_blocking(
                decide, ctx.db, ctx.settings, _scope(ctx), approval_id, decision.approve
            )
    except ApprovalError as refused:  # lost a race after the request's check: nothing decided here
        return ToolOutput(dumps({"error": refused.detail, "hint": HINT}), is_error=True)
    except TimeoutError:  # the thread goes on: the claim and the write finish, the audit records them
        return ToolOutput(dumps({"running": True, "note": STILL_RUNNING.format(tool=tool)}))
    failed = decided.outcome is not None and not decided.outcome.ok
    return ToolOutput(dumps(json_safe(decided.result())), is_error=failed)
