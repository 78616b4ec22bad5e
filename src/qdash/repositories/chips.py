"""Chip documents: lookup and the project's default chip.

The default chip is the most recently installed chip *of the caller's project* — upstream chose
across all projects, which leaked another tenant's chip id into answers.
"""

from __future__ import annotations

from qdash.repositories.scope import Doc, ProjectScope

CHIP = "chip"


def get_chip(scope: ProjectScope, chip_id: str) -> Doc | None:
    """The chip document, or ``None`` when the project has no such chip."""
    return scope.find_one(CHIP, {"chip_id": chip_id})


def latest_chip_id(scope: ProjectScope) -> str | None:
    """The chip installed last in this project (index ``project_id, installed_at↓``)."""
    doc = scope.find_one(CHIP, {}, {"chip_id": 1}, sort=[("installed_at", -1)])
    return None if doc is None else str(doc["chip_id"])


def chip_ids(scope: ProjectScope, limit: int = 20) -> list[str]:
    """The project's chip ids, most recently installed first (to name them in a not-found error)."""
    docs = scope.find(CHIP, {}, {"chip_id": 1}, sort=[("installed_at", -1)], limit=limit)
    return [str(doc["chip_id"]) for doc in docs]


def chip_known(scope: ProjectScope, chip_id: str) -> bool:
    """Whether the project has this chip: its chip document, or (databases without chip documents)
    any current qubit document of it."""
    query = {"chip_id": chip_id}
    return any(scope.find_one(name, query, {"chip_id": 1}) is not None for name in (CHIP, "qubit"))


class ChipNotFoundError(LookupError):
    """The project has no chip of that id; the message names the chips it has."""


def require_chip(scope: ProjectScope, chip_id: str) -> None:
    """:class:`ChipNotFoundError` unless the project has the chip (another project's chip too)."""
    if not chip_known(scope, chip_id):
        known = ", ".join(chip_ids(scope)) or "none"
        raise ChipNotFoundError(
            f"Chip not found in project {scope.project_id}: {chip_id} (its chips: {known})"
        )
