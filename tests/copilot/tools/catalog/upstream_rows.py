"""Small documents shaped as upstream QDash writes them (its ``TaskResultHistoryDocument`` and
friends): ObjectId ``_id``s, ``excluded``/``cooldown_id``/``user_note`` fields, optional
``project_id``, string ``elapsed_time`` in older rows. Tests insert only what they need."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bson import ObjectId

from qdash.copilot.tools.spec import ToolContext
from qdash.settings import Settings

from .conftest import run_tool

PROJECT, CHIP = "proj-up", "64Qv3"
START = datetime(2026, 3, 1, tzinfo=UTC)


def upstream_run(
    qid: str, minute: int, value: float, *, name: str = "CheckT1", **extra: Any
) -> dict[str, Any]:
    """One completed ``task_result_history`` row as upstream's task executor saves it."""
    param = "t1" if name == "CheckT1" else "qubit_frequency"
    unit = "μs" if param == "t1" else "GHz"
    return {
        "_id": ObjectId(),
        "project_id": PROJECT,
        "username": "alice",
        "task_id": f"task-{qid}-{minute}",
        "name": name,
        "upstream_id": "",
        "status": "completed",
        "message": "",
        "input_parameters": {},
        "output_parameters": {
            param: {"parameter_name": param, "qid_role": "", "value": value, "unit": unit, "error": 0.5}
        },
        "output_parameter_names": [param],
        "note": {},
        "user_note": {"content": "", "updated_by": "", "updated_at": None},
        "figure_path": [],
        "start_at": START + timedelta(minutes=minute),
        "end_at": START + timedelta(minutes=minute, seconds=30),
        "elapsed_time": 30.0,
        "task_type": "qubit",
        "qid": qid,
        "execution_id": f"20260301-{minute:03d}",
        "tags": [],
        "chip_id": CHIP,
        "cooldown_id": "",
        "excluded": False,
        "excluded_reason": "",
        "excluded_by": None,
        "excluded_at": None,
        **extra,
    }


def excluded(doc: dict[str, Any], reason: str = "bad fit") -> dict[str, Any]:
    """The row after a person excluded it on the dashboard's metrics screen."""
    return {**doc, "excluded": True, "excluded_reason": reason, "excluded_by": "bob", "excluded_at": START}


def chip_doc() -> dict[str, Any]:
    return {"_id": ObjectId(), "project_id": PROJECT, "chip_id": CHIP, "size": 64, "installed_at": START}


def qubit_doc(qid: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"_id": ObjectId(), "project_id": PROJECT, "chip_id": CHIP, "qid": qid, "data": data or {}}


def tool_caller(db: Any, settings: Settings) -> Callable[..., dict[str, Any]]:
    """``call(name, **args)`` on ``db`` as a member of the upstream-shaped project."""
    ctx = ToolContext(db=db, project_id=PROJECT, username="alice", settings=settings)
    return lambda name, **args: run_tool(ctx, name, args)
