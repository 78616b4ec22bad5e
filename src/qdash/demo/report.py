"""What ``seed_demo`` inserted, for the CLI, the benchmark and tests that assert tool outputs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pymongo.database import Database

    from qdash.demo.spec import DemoSpec


@dataclass
class ChipReport:
    project_id: str
    chip_id: str
    topology_id: str
    username: str
    num_qubits: int
    num_couplings: int
    days: int
    bad_qubits: list[str]
    t1_degrading_qubit: str
    tls_qubit: str
    tls_days: tuple[str, str]
    """First and last execution date (``YYYYMMDD``) of the TLS dip window."""
    mediocre_qubits: list[str]
    execution_ids: list[str] = field(default_factory=list)
    aborted_execution_id: str | None = None


@dataclass
class UserReport:
    username: str
    token: str
    default_project_id: str | None
    memberships: dict[str, str]
    disabled: bool


@dataclass
class SeedReport:
    """Counts per collection, the chips with their special qubits, and the demo users with tokens."""

    seed: int
    scale: str
    end_at: str
    counts: Counter[str] = field(default_factory=Counter)
    projects: dict[str, str] = field(default_factory=dict)
    """project_id → name."""
    chips: list[ChipReport] = field(default_factory=list)
    users: list[UserReport] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def total_documents(self) -> int:
        return sum(self.counts.values())

    @property
    def documents_per_second(self) -> float:
        return self.total_documents / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def chip(self, project_id: str, chip_id: str) -> ChipReport:
        """The report of one chip; KeyError names what exists when it is not there."""
        for chip in self.chips:
            if (chip.project_id, chip.chip_id) == (project_id, chip_id):
                return chip
        known = [(c.project_id, c.chip_id) for c in self.chips]
        raise KeyError(f"no chip {chip_id} in {project_id}; seeded chips: {known}")

    def token(self, username: str) -> str:
        for user in self.users:
            if user.username == username:
                return user.token
        raise KeyError(f"no demo user {username!r}; users: {[u.username for u in self.users]}")


@dataclass(frozen=True)
class DemoLab:
    """A seeded database with its report and spec (the tests' session fixture ``demo_lab``)."""

    db: Database[dict[str, Any]]
    report: SeedReport
    spec: DemoSpec
