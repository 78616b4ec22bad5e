"""Chip and its current calibrated state: ``chip``, ``qubit`` and ``coupling``.

``qubit``/``coupling`` hold the latest value of every parameter (``data``), deep-merged on every
saved task, so "current value" questions read one small collection instead of the history.
"""

from __future__ import annotations

from pydantic import Field

from qdash.models.common import Document, ParameterModel, SystemInfo, UtcDatetime


class Chip(Document, collection="chip", natural_key=("project_id", "chip_id")):
    """One physical processor; ``chip_id`` is unique per project only."""

    project_id: str
    chip_id: str
    username: str = ""
    size: int = 64
    topology_id: str | None = None
    installed_at: UtcDatetime | None = None
    current_cooldown_id: str | None = None
    """Upstream's cool-down the chip is loaded in; its runs carry it as ``cooldown_id``."""
    system_info: SystemInfo = Field(default_factory=SystemInfo)


class QubitState(Document, collection="qubit", natural_key=("project_id", "chip_id", "qid")):
    """Current state of one qubit; ``data`` maps parameter name → latest saved ParameterModel."""

    project_id: str
    username: str = ""
    chip_id: str
    qid: str
    status: str = "pending"
    data: dict[str, ParameterModel] = Field(default_factory=dict)
    system_info: SystemInfo = Field(default_factory=SystemInfo)


class CouplingState(QubitState, collection="coupling"):
    """Current state of one coupled pair; ``qid`` is the coupling id in topology order (``"4-1"``)."""
