"""What every catalogue tool needs from its context: the project scope, the chip, time format.

Why: the project comes only from :class:`ToolContext` (never from the model), and a ``null``
chip means the project's latest installed chip; doing both in one place keeps every tool equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from qdash.copilot.tools.catalog.formatting import TimeFormat
from qdash.copilot.tools.spec import ToolContext, ToolError
from qdash.repositories.chips import chip_ids, chip_known, latest_chip_id
from qdash.repositories.scope import ProjectScope


def scope_of(ctx: ToolContext) -> ProjectScope:
    """Reads restricted to the caller's project, bounded by the tool timeout."""
    return ProjectScope(ctx.db, ctx.project_id, ctx.max_time_ms)


def resolve_chip(scope: ProjectScope, chip_id: str | None) -> str:
    """``chip_id`` when the project has it, or the project's most recently installed chip.

    An unknown chip is named as such, with the project's chips, instead of surfacing later as
    "Qubit 16 not found (chip_id=NOPE)".
    """
    if chip_id:
        if not chip_known(scope, chip_id):
            known = ", ".join(chip_ids(scope)) or "none"
            raise ToolError(
                f"Chip {chip_id} not found; chips of this project: {known}",
                "pass one of these chip ids, or null for the project's current chip",
            )
        return chip_id
    latest = latest_chip_id(scope)
    if latest is None:
        raise ToolError("No chips found in this project", "ask the user which chip to use")
    return latest


def time_format(ctx: ToolContext, moments: Iterable[object] = ()) -> TimeFormat:
    """Short timestamps in the deployment timezone, one pattern for the whole result."""
    return TimeFormat(ctx.settings.copilot.timezone, moments)


def excluded_note(excluded: int) -> dict[str, int]:
    """``{"excluded": n}`` when ``n`` measurements a person excluded from metrics were left out of a
    result (upstream's ``excluded`` flag), else nothing: the answer can say why a run is missing."""
    return {"excluded": excluded} if excluded else {}


PARAMETERS_HINT = "list_available_parameters shows which parameters exist"


def empty_result(filters: dict[str, Any], *, excluded: int = 0, hint: str | None = None) -> dict[str, Any]:
    """Nothing matched: ``{"count": 0, "filters": {...}}`` (the filters given, chip resolved), with
    ``excluded`` when only excluded runs matched and a ``hint`` where to look instead.

    Why a result and not an error: an error tells the model its call was wrong and shows the step
    as failed in the dashboards' traces ("some steps failed" above a correct answer), while "no
    failed task in this execution" is the answer. Wrong arguments (an unknown chip, task, qubit or
    entity) stay errors.
    """
    shown = {key: value for key, value in filters.items() if value not in (None, "", [])}
    return {"count": 0, "filters": shown, **excluded_note(excluded), **({"hint": hint} if hint else {})}


def context_text(**filters: object) -> str:
    """``(task_name=CheckT1, qid=16, chip_id=64Qv3)``: the context appended to not-found errors."""
    shown = ", ".join(f"{key}={value}" for key, value in filters.items() if value not in (None, "", []))
    return f"({shown})" if shown else ""
