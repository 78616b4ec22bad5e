"""What the upstream-shaped lab contains: people, the chip, executions, tasks and their values.

Why separate from the document builders: tests assert on these facts (which row is excluded, which
execution predates projects, who is revoked) without re-deriving them from documents.
Values are deterministic functions of (parameter, qid, execution), so a test can recompute them.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from qdash.demo.catalogue import Output  # (name, unit, description): the same shape as the demo's

#: Upstream's workers and ``installed_at`` use the lab's zone (``pendulum.now(tz="Asia/Tokyo")``).
LAB_TZ = ZoneInfo("Asia/Tokyo")
PROJECT_ID = "3b1f2c4d-7e8a-4b9c-8d0e-1f2a3b4c5d6e"  # upstream: str(uuid.uuid4())
PROJECT_NAME = "Quantum Lab"
CHIP_ID = "64Qv1"
LEGACY_CHIP_ID = "SAMPLE"  # written before projects existed: no project_id
CHIP_SIZE = 64
OWNER = "alice"
CALIBRATED_QIDS = tuple(str(i) for i in range(8))
#: Coupled pairs among the calibrated qubits; upstream stores each in both directions.
PAIRS = (("0", "1"), ("0", "2"), ("1", "3"), ("2", "3"), ("4", "5"), ("4", "6"), ("5", "7"), ("6", "7"))
CR_PAIRS = (("0", "1"), ("2", "3"), ("4", "5"), ("6", "7"))  # calibrated control→target
SESSION_ID = "upstream-session-1"

Status = Literal["active", "revoked", "pending"]


@dataclass(frozen=True)
class Person:
    username: str
    token: str
    role: str
    status: Status | None  # None: no membership row
    has_default_project: bool  # older user documents lack default_project_id


PEOPLE = (
    Person("alice", "upstream-token-alice", "owner", "active", True),
    Person("bob", "upstream-token-bob", "editor", "active", False),
    Person("carol", "upstream-token-carol", "viewer", "revoked", True),
    Person("dave", "upstream-token-dave", "viewer", "pending", False),
)
TOKENS = {p.username: p.token for p in PEOPLE}

#: ``pre_project``: before upstream had projects (no project_id, elapsed_time a string, no
#: provenance); ``old``: project-scoped but before excluded/cooldown_id/user_note and provenance;
#: ``new``: provenance, cooldown_id, excluded; ``newest``: + user_id, ai_review, database_updates.
Shape = Literal["pre_project", "old", "new", "newest"]


@dataclass(frozen=True)
class Execution:
    execution_id: str
    start: datetime  # lab-local, aware
    shape: Shape
    cooldown_id: str | None
    kind: Literal["1q", "2q"]
    qids: tuple[str, ...]

    @property
    def index(self) -> int:
        return int(self.execution_id.split("-")[1])

    @property
    def date(self) -> str:
        return self.execution_id.split("-")[0]

    @property
    def calib_data_path(self) -> str:
        return f"/app/calib_data/{OWNER}/{self.date}/{self.index:03d}"

    @property
    def in_project(self) -> bool:
        return self.shape != "pre_project"

    @property
    def has_provenance(self) -> bool:
        return self.shape in ("new", "newest")


def _jst(day: str, hour: int) -> datetime:
    return datetime(int(day[:4]), int(day[4:6]), int(day[6:]), hour, tzinfo=LAB_TZ)


_PAIR_QIDS = tuple(f"{c}-{t}" for c, t in CR_PAIRS)
EXECUTIONS = (
    Execution("20260105-000", _jst("20260105", 10), "pre_project", None, "1q", CALIBRATED_QIDS[:4]),
    Execution("20260210-000", _jst("20260210", 10), "old", None, "1q", CALIBRATED_QIDS),
    Execution("20260220-000", _jst("20260220", 10), "new", "CD-2026-01", "1q", CALIBRATED_QIDS),
    Execution("20260227-000", _jst("20260227", 10), "newest", "CD-2026-02", "1q", CALIBRATED_QIDS),
    Execution("20260227-001", _jst("20260227", 15), "newest", "CD-2026-02", "2q", _PAIR_QIDS),
)
PRE_PROJECT = EXECUTIONS[0]


@dataclass(frozen=True)
class Input:
    key: str  # the dict key in input_parameters
    parameter_name: str  # "" = the key (upstream ParameterModel default)
    qid_role: str = ""


@dataclass(frozen=True)
class TaskSpec:
    name: str
    task_type: Literal["qubit", "coupling"]
    outputs: tuple[Output, ...]
    inputs: tuple[Input, ...]


_FREQ = Input("qubit_frequency", "")
_HPI = Input("hpi_amplitude", "")  # read from qubex params; no task here produces it
QUBIT_TASKS = (
    TaskSpec("CheckQubitFrequency", "qubit", (Output("qubit_frequency", "GHz", "Qubit frequency"),), ()),
    TaskSpec("CheckT1", "qubit", (Output("t1", "μs", "T1 time"),), (_FREQ, _HPI)),
    TaskSpec("CheckT2Echo", "qubit", (Output("t2_echo", "μs", "T2 echo time"),), (_FREQ, _HPI)),
    TaskSpec(
        "X90InterleavedRandomizedBenchmarking",
        "qubit",
        (Output("x90_gate_fidelity", "a.u.", "X90 gate fidelity"),),
        (_FREQ, _HPI),
    ),
)
_CONTROL = Input("control_qubit_frequency", "qubit_frequency", "control")
_TARGET = Input("target_qubit_frequency", "qubit_frequency", "target")
COUPLING_TASKS = (
    TaskSpec(
        "CheckCrossResonance",
        "coupling",
        (Output("cr_amplitude", "a.u.", "CR amplitude"), Output("cr_phase", "a.u.", "CR phase")),
        (_CONTROL, _TARGET),
    ),
    TaskSpec(
        "ZX90InterleavedRandomizedBenchmarking",
        "coupling",
        (Output("zx90_gate_fidelity", "a.u.", "ZX90 gate fidelity"),),
        (_CONTROL, _TARGET, Input("cr_amplitude", "", "coupling")),
    ),
)
PRE_PROJECT_TASKS = (QUBIT_TASKS[1],)  # the first lab only measured T1

#: A person removed this measurement from metrics on the dashboard (``excluded``).
EXCLUDED = ("20260227-000", "CheckT1", "3")
EXCLUDED_T1 = 2.1  # μs: a TLS spike; every statistic must leave it out
#: The dashboard's free-form note on one task result (``user_note``).
USER_NOTE = ("20260227-000", "CheckT1", "5")
USER_NOTE_TEXT = "Re-measured after the TWPA retune; trust this one."
#: A failed fit whose output upstream saved anyway (backend_saver: "Always save").
FAILED = ("20260220-000", "CheckT2Echo", "6")
#: Upstream's seed import (qubex params YAML → versions with qids like "Q40").
SEED_EXECUTION_ID = "seed-import-1a2b3c4d"
SEED_TASK_ID = "seed-import-manual-5e6f7a8b"
SEED_VALUES = {"Q40": 8.1234, "Q05": 7.9901}
SEED_AT = _jst("20260215", 9)


def task_id(execution_id: str, task_name: str, qid: str) -> str:
    """A UUID4-shaped id, stable across runs (upstream: ``str(uuid.uuid4())``)."""
    digest = hashlib.sha256(f"upstream-lab/{execution_id}/{task_name}/{qid}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def value_of(parameter: str, qid: str, execution: Execution) -> float:
    """The measured value, in stored units; ``EXCLUDED`` gets its outlier."""
    k = EXECUTIONS.index(execution)
    if parameter == "t1" and (execution.execution_id, "CheckT1", qid) == EXCLUDED:
        return EXCLUDED_T1
    if "-" in qid:
        i = [f"{c}-{t}" for c, t in CR_PAIRS].index(qid)
        return {"cr_amplitude": 0.5 + 0.01 * i, "cr_phase": 0.1 + 0.02 * i}.get(
            parameter, round(0.985 + 0.002 * i, 4)
        )
    q = int(qid)
    if parameter == "qubit_frequency":
        return round(7.80 + 0.037 * q + 0.0004 * k, 6)
    t1 = 38.0 + 2.5 * q + 1.5 * ((k * 7 + q) % 5)
    return {"t1": t1, "t2_echo": round(0.8 * t1, 3)}.get(parameter, round(0.995 + 0.0005 * ((q + k) % 4), 5))


def label(qid: str) -> str:
    """Qubex's label: ``"Q05"``, ``"Q00-Q01"`` (upstream's figure names and note keys)."""
    return "-".join(f"Q{int(q):02d}" for q in qid.split("-"))
