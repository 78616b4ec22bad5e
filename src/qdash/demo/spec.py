"""What the demo lab contains: projects, chips, users and schedule knobs (:class:`DemoSpec`).

Ready-made sizes: :meth:`DemoSpec.default` (the lab ``qdash serve`` seeds; sized so every tool
query on the embedded store stays well under a second), :meth:`DemoSpec.lab` (144 qubits × 365
days, for benchmarks), :meth:`DemoSpec.history` (one 64-qubit chip at a chosen history length, for
the history axis of ``bench/tools.py``) and :meth:`DemoSpec.small` (the test suite's session
fixture: every story of the default, fewer days).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from qdash.models.auth import Role


@dataclass(frozen=True)
class ProjectPlan:
    project_id: str
    name: str
    owner: str


@dataclass(frozen=True)
class ChipPlan:
    """One chip and how many days (ending at the spec's end) it has been calibrated."""

    project_id: str
    chip_id: str
    topology_id: str
    username: str
    days: int
    installed_days_before_end: int
    start_offset_min: int = 0
    """Minutes after the day's anchor the 1Q-Calibration starts (chips of one project interleave)."""
    bring_up: bool = True
    """Day 0 runs the full 1Q and 2Q calibration; without it the history starts with a weekly run."""


def _two_projects(demo_64: int, demo_144: int, other_64: int) -> tuple[ChipPlan, ...]:
    """proj-demo's 64Qv3 (alice, brought up in the window) and 144Qv2 (carol, 20 min later), and
    proj-other's own 64Qv3 (bob), each calibrated for the given number of days."""
    return (
        ChipPlan("proj-demo", "64Qv3", "square-lattice-mux-64", "alice", demo_64, 45),
        ChipPlan("proj-demo", "144Qv2", "square-lattice-mux-144", "carol", demo_144, 200, 20, bring_up=False),
        ChipPlan("proj-other", "64Qv3", "square-lattice-mux-64", "bob", other_64, 20, bring_up=False),
    )


def demo_token(username: str) -> str:
    """A demo user's public bearer token (the chat page offers it when the stored hash matches)."""
    return f"demo-token-{username}"


@dataclass(frozen=True)
class UserPlan:
    username: str
    default_project_id: str | None
    memberships: tuple[tuple[str, Role], ...]
    disabled: bool = False

    @property
    def token(self) -> str:
        """The demo bearer token: fixed, printed by ``qdash demo seed``; only its hash is stored."""
        return demo_token(self.username)


_PROJECTS = (
    ProjectPlan("proj-demo", "Demo Lab", "alice"),
    ProjectPlan("proj-other", "Other Lab", "bob"),
)
_USERS = (
    UserPlan("alice", "proj-demo", (("proj-demo", "owner"),)),
    UserPlan("bob", "proj-other", (("proj-other", "owner"),)),
    UserPlan("carol", "proj-demo", (("proj-demo", "editor"), ("proj-other", "viewer"))),
    UserPlan("dave", "proj-demo", (("proj-demo", "viewer"),), disabled=True),
)


@dataclass(frozen=True)
class DemoSpec:
    """Everything the generator needs; same spec (including ``end_at``) and seed → identical data."""

    seed: int = 42
    end_at: datetime | None = None
    """End of the simulated period; ``None`` = now, floored to the hour (so the demo looks current)."""
    projects: tuple[ProjectPlan, ...] = _PROJECTS
    chips: tuple[ChipPlan, ...] = ()
    users: tuple[UserPlan, ...] = _USERS
    weekly_every: int = 7
    two_q_every: int = 2
    max_reruns_per_day: int = 3
    failure_scale: float = 1.0
    """Multiplies the per-qubit failure rates (3 %, 15 % on bad qubits)."""
    abort_one_2q_execution: bool = True
    chunk_size: int = 5000
    scale: str = "default"
    ai_reviews: bool = True
    """AI reviews on the newest results (``demo/reviews.py``); off for labs that test reviewing itself,
    which start as a lab before its first review job."""

    @classmethod
    def default(cls, seed: int = 42, end_at: datetime | None = None) -> DemoSpec:
        """proj-demo: 64Qv3 × 30 days and 144Qv2 × 2 days; proj-other: its own 64Qv3 × 3 days."""
        return cls(
            seed=seed,
            end_at=end_at,
            chips=_two_projects(30, 2, 3),
        )

    @classmethod
    def lab(cls, seed: int = 42, end_at: datetime | None = None) -> DemoSpec:
        """Benchmark scale: one 144-qubit chip calibrated for a year."""
        return cls(
            seed=seed,
            end_at=end_at,
            scale="lab",
            chips=(ChipPlan("proj-demo", "144Qv2", "square-lattice-mux-144", "alice", 365, 400),),
        )

    @classmethod
    def history(cls, days: int = 365, seed: int = 42, end_at: datetime | None = None) -> DemoSpec:
        """History-length benchmark: one 64-qubit chip calibrated for ``days`` (30, 90, 365), one
        daily calibration without reruns, so a year seeds in minutes and sizes differ only in age."""
        return cls(
            seed=seed,
            end_at=end_at,
            scale="history",
            chips=(ChipPlan("proj-demo", "64Qv3", "square-lattice-mux-64", "alice", days, days + 15),),
            max_reruns_per_day=0,
        )

    @classmethod
    def small(cls, seed: int = 7, end_at: datetime | None = None) -> DemoSpec:
        """Test size: both projects and chips, every special qubit and failure kind, a few seconds."""
        return cls(
            seed=seed,
            end_at=end_at,
            scale="small",
            chips=_two_projects(8, 1, 2),
        )

    @classmethod
    def for_scale(cls, scale: str, seed: int = 42) -> DemoSpec:
        """``default`` | ``lab`` | ``small``; anything else is refused with the valid names."""
        builders = {"default": cls.default, "lab": cls.lab, "small": cls.small}
        if scale not in builders:
            raise ValueError(f"unknown scale {scale!r}; use one of {sorted(builders)}")
        return builders[scale](seed=seed)

    def with_days(self, days: int) -> DemoSpec:
        """The longest-running chips get ``days``; shorter ones keep theirs (at most ``days``)."""
        if days < 1:
            raise ValueError(f"days must be ≥ 1 (got {days})")
        longest = max(chip.days for chip in self.chips)
        chips = tuple(
            replace(chip, days=days if chip.days == longest else min(chip.days, days)) for chip in self.chips
        )
        return replace(self, chips=chips)

    def resolved_end(self) -> datetime:
        """``end_at`` in UTC, or now floored to the hour."""
        if self.end_at is not None:
            end = self.end_at if self.end_at.tzinfo else self.end_at.replace(tzinfo=UTC)
            return end.astimezone(UTC)
        return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)

    def validate(self) -> None:
        """Refuse inconsistent specs with a message naming the field."""
        project_ids = {p.project_id for p in self.projects}
        seen: set[tuple[str, str]] = set()
        if not self.chips:
            raise ValueError("DemoSpec.chips is empty; add at least one ChipPlan")
        for chip in self.chips:
            if chip.project_id not in project_ids:
                raise ValueError(f"chip {chip.chip_id} names unknown project {chip.project_id}")
            if (chip.project_id, chip.chip_id) in seen:
                raise ValueError(f"chip {chip.chip_id} appears twice in project {chip.project_id}")
            seen.add((chip.project_id, chip.chip_id))
            if chip.days < 1:
                raise ValueError(f"chip {chip.chip_id}: days must be ≥ 1 (got {chip.days})")
        for user in self.users:
            for project_id, _ in user.memberships:
                if project_id not in project_ids:
                    raise ValueError(f"user {user.username} is a member of unknown project {project_id}")


def installed_at(spec_end: datetime, chip: ChipPlan) -> datetime:
    """When a chip was installed: a whole number of days before the end, at midnight UTC."""
    day = (spec_end - timedelta(days=chip.installed_days_before_end)).date()
    return datetime(day.year, day.month, day.day, tzinfo=UTC)
