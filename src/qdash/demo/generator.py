"""``seed_demo``: plan every execution of the demo lab, run them in time order, write the documents.

Planning first (all executions of a project with their start times) lets execution ids follow
upstream QDash's rule — start date + a counter per project and day in start order — even when chips
of one project interleave. Then each project's executions run chronologically, so version chains
and "current value at task start" are exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from pymongo.database import Database

from qdash.db.ownership import DEMO_MARKER_ID, META_COLLECTION
from qdash.demo.catalogue import (
    DAILY_1Q_ORDER,
    DAILY_2Q_ORDER,
    FULL_1Q_ORDER,
    FULL_2Q_ORDER,
    GLOBAL_PREFIX,
    TASKS,
    WEEKLY_1Q_ORDER,
)
from qdash.demo.engine import ChipEngine, Target, TaskRun
from qdash.demo.physics import ChipPhysics
from qdash.demo.report import ChipReport, SeedReport, UserReport
from qdash.demo.reviews import DemoReviewer
from qdash.demo.spec import ChipPlan, DemoSpec, installed_at
from qdash.demo.writer import DEMO_COLLECTIONS, Sink
from qdash.models.auth import hash_token
from qdash.models.topology import Topology, load_topology

Progress = Callable[[int, int], None]
"""Called as ``progress(executions_done, executions_total)``."""

SKIP_AFTER_FAILURE = 1 / 3
STEP_GAP_S = 2.0
COOLDOWN_STARTS = (0.0, 0.125, 0.25)
"""Where each thermal cycle of a project's fridge starts, as a share of its history: short
cool-downs after bring-up (warmed up again to fix the wiring), then the long current one. Every story
(the degrading qubit's last 75 %, the TLS dip at 60 %) stays inside the newest cycle, where chip-wide
trends and the ``notable`` view look."""
DAYS_PER_COOLDOWN = 4
"""A history gets one cycle per this many days, at most ``len(COOLDOWN_STARTS)``, at least one: the
default lab's 30 days three, the test lab's 8 days two, a 3-day history one."""


class DemoDataExistsError(RuntimeError):
    """The target database already holds lab data; seeding refuses unless asked to reset."""


@dataclass
class PlannedExecution:
    chip_index: int
    kind: str
    """``1q-full`` | ``1q-weekly`` | ``1q-daily`` | ``2q-full`` | ``2q-daily`` | ``2q-abort`` | ``rerun``."""
    local_day: int
    start_at: datetime
    execution_id: str = ""
    cooldown_id: str = ""
    """Upstream's ``YYYY-NNN`` (year the cycle started, counter per project and year)."""


_NAMES = {"1q": ("1Q-Calibration", ["daily", "1Q"]), "2q": ("2Q-Calibration", ["daily", "2Q"])}


def _plan(spec: DemoSpec, end: datetime, rng: np.random.Generator) -> dict[str, list[PlannedExecution]]:
    """Every execution per project, sorted by start, with ids ``YYYYMMDD-NNN`` per project and date."""
    per_project: dict[str, list[PlannedExecution]] = {p.project_id: [] for p in spec.projects}
    for index, chip in enumerate(spec.chips):
        two_q_days = [d for d in range(chip.days) if d % spec.two_q_every == 0]
        daily_2q = [d for d in two_q_days if d > 0 or not chip.bring_up]
        aborted = -1
        if spec.abort_one_2q_execution and len(daily_2q) >= 3:
            aborted = int(rng.choice(daily_2q[:-1]))
        for day in range(chip.days):
            anchor = end - timedelta(days=chip.days - day)
            plans = per_project[chip.project_id]
            start_1q = anchor + timedelta(minutes=chip.start_offset_min + float(rng.uniform(0, 15)))
            full = day == 0 and chip.bring_up
            kind_1q = "1q-full" if full else "1q-weekly" if day % spec.weekly_every == 0 else "1q-daily"
            plans.append(PlannedExecution(index, kind_1q, day, start_1q))
            if day in two_q_days:
                kind = "2q-full" if full else "2q-abort" if day == aborted else "2q-daily"
                start_2q = anchor + timedelta(hours=4, minutes=float(rng.uniform(0, 30)))
                plans.append(PlannedExecution(index, kind, day, start_2q))
            for _ in range(int(rng.integers(0, spec.max_reruns_per_day + 1))):
                start = anchor + timedelta(hours=float(rng.uniform(6, 20)))
                plans.append(PlannedExecution(index, "rerun", day, start))
    for project_id, plans in per_project.items():
        plans.sort(key=lambda p: p.start_at)
        counters: dict[str, int] = {}
        for plan in plans:
            date = plan.start_at.strftime("%Y%m%d")
            counters[date] = counters.get(date, 0) + 1
            plan.execution_id = f"{date}-{counters[date]:03d}"
        span = max((chip.days for chip in spec.chips if chip.project_id == project_id), default=0)
        _assign_cooldowns(plans, _cooldown_starts(end, span))
    return per_project


def _cooldown_starts(end: datetime, span_days: int) -> list[tuple[datetime, str]]:
    """The project's cool-downs over its last ``span_days``: ``(start, cooldown_id)`` oldest first.

    Why: upstream QDash stamps every task result with the cool-down its chip was in
    (``task_result_history.cooldown_id``, ids like ``2026-001``), and a lab compares cool-downs. The
    chips of a project share one fridge, so a cycle is a span of time, not of one chip's days.
    """
    shares = COOLDOWN_STARTS[: max(1, min(len(COOLDOWN_STARTS), span_days // DAYS_PER_COOLDOWN))]
    first = end - timedelta(days=span_days)
    starts = [first + timedelta(days=round(share * span_days)) for share in shares]
    per_year: dict[int, int] = {}
    named = []
    for start in starts:
        per_year[start.year] = per_year.get(start.year, 0) + 1
        named.append((start, f"{start.year}-{per_year[start.year]:03d}"))
    return named


def _assign_cooldowns(plans: list[PlannedExecution], cycles: list[tuple[datetime, str]]) -> None:
    """Each execution (and so each of its runs) is in the newest cycle that started before it."""
    for plan in plans:
        plan.cooldown_id = next(
            (name for start, name in reversed(cycles) if start <= plan.start_at), cycles[0][1]
        )


class _ChipRun:
    """Runs the planned executions of one chip through its engine."""

    def __init__(self, plan: ChipPlan, topology: Topology, engine: ChipEngine, spec: DemoSpec) -> None:
        self.plan, self.topology, self.engine, self.spec = plan, topology, engine, spec
        self.failed_today: list[dict[str, Any]] = []
        self.report_ids: list[str] = []
        self.aborted: str | None = None
        self.tls_dates: list[str] = []
        self.cooldown_id = ""
        """The cool-down of the newest execution: the chip's ``current_cooldown_id`` at the end."""

    def _execution(self, planned: PlannedExecution, name: str, tags: list[str]) -> dict[str, Any]:
        date, counter = planned.execution_id.split("-")
        return {
            "execution_id": planned.execution_id,
            "username": self.plan.username,
            "tags": tags,
            "name": name,
            "calib_data_path": f"calib_data/{self.plan.username}/{date}/{counter}",
            "failure_scale": self.spec.failure_scale,
            "cooldown_id": planned.cooldown_id,
        }

    def run(self, planned: PlannedExecution, sink: Sink) -> None:
        engine = self.engine
        self.cooldown_id = planned.cooldown_id
        if planned.kind != "rerun" and planned.kind.startswith("1q"):
            engine.start_day(planned.local_day)
            self.failed_today = []
            first, last = engine.physics.special.tls_days
            if first <= planned.local_day <= last:
                self.tls_dates.append(planned.execution_id.split("-")[0])
        family = planned.kind[:2]
        if planned.kind == "rerun":
            execution = self._execution(planned, "Ad-hoc Rerun", ["adhoc", "rerun"])
            runs, end, message = self._rerun(planned.start_at, execution)
        else:
            name, tags = _NAMES[family]
            level = planned.kind.split("-")[1]
            tags = [*tags, level] if level in ("full", "weekly") else list(tags)
            execution = self._execution(planned, name, tags)
            prefix: tuple[str, ...] = ()
            if family == "1q":
                order = {"1q-full": FULL_1Q_ORDER, "1q-weekly": WEEKLY_1Q_ORDER}.get(
                    planned.kind, DAILY_1Q_ORDER
                )
                prefix = (*GLOBAL_PREFIX, "CheckSkew") if planned.kind == "1q-full" else GLOBAL_PREFIX
                targets = [Target(str(q), q) for q in range(self.topology.num_qubits)]
            else:
                order = FULL_2Q_ORDER if planned.kind == "2q-full" else DAILY_2Q_ORDER
                targets = [Target(f"{a}-{b}", i, a, b) for i, (a, b) in enumerate(self.topology.couplings)]
            if planned.kind == "2q-abort":
                order = order[:1]
            runs, end = self._steps(planned.start_at, execution, prefix, order, targets)
            message = ""
            if planned.kind == "2q-abort":
                message = f"Aborted after {order[0]}: lost link to the control electronics (LinkUp timeout)"
                self.aborted = planned.execution_id
            if family == "1q":
                self.failed_today = [r.doc for r in runs if r.doc["status"] == "failed" and r.doc["qid"]]
        failed = sum(r.doc["status"] == "failed" for r in runs)
        status = "failed" if message or (planned.kind == "rerun" and failed) else "completed"
        if status == "failed" and not message:
            message = f"{failed} of {len(runs)} tasks failed"
        sink.add(
            "execution_history",
            {
                "_id": f"{self.plan.project_id}:{planned.execution_id}",
                "project_id": self.plan.project_id,
                "username": self.plan.username,
                "name": execution["name"],
                "execution_id": planned.execution_id,
                "calib_data_path": execution["calib_data_path"],
                "note": {},
                "status": status,
                "tags": execution["tags"],
                "chip_id": self.plan.chip_id,
                "start_at": planned.start_at,
                "end_at": end,
                "elapsed_time": round((end - planned.start_at).total_seconds(), 3),
                "message": message,
                "system_info": {"created_at": planned.start_at, "updated_at": end},
            },
        )
        engine.calibration_note(execution, end)
        self.report_ids.append(planned.execution_id)

    def _steps(
        self,
        start: datetime,
        execution: dict[str, Any],
        prefix: tuple[str, ...],
        order: tuple[str, ...],
        targets: list[Target],
    ) -> tuple[list[TaskRun], datetime]:
        """Global tasks one after another, then each task on every target in parallel (one step)."""
        runs: list[TaskRun] = []
        clock = start
        for name in prefix:
            run = self.engine.run_task(TASKS[name], Target(""), execution, clock)
            runs.append(run)
            clock = run.doc["end_at"] + timedelta(seconds=STEP_GAP_S)
        failed_last: dict[str, str] = {}
        for name in order:
            step_end = clock
            for offset, target in enumerate(targets):
                skip = failed_last.pop(target.qid, None)
                if skip is not None and self.engine.rng.random() >= SKIP_AFTER_FAILURE:
                    skip = None
                task_start = clock + timedelta(milliseconds=50 * offset)
                run = self.engine.run_task(TASKS[name], target, execution, task_start, skipped_because=skip)
                runs.append(run)
                if run.doc["status"] == "failed":
                    failed_last[target.qid] = name
                step_end = max(step_end, run.doc["end_at"])
            clock = step_end + timedelta(seconds=STEP_GAP_S)
        return runs, clock

    def _rerun(self, start: datetime, execution: dict[str, Any]) -> tuple[list[TaskRun], datetime, str]:
        """Re-execute one earlier task of today (preferably a failed one) with ``source_task_id`` set."""
        rng = self.engine.rng
        candidates = [d for d in self.failed_today if TASKS[d["name"]].outputs]
        if candidates and rng.random() < 0.7:
            original = candidates[int(rng.integers(len(candidates)))]
            self.failed_today.remove(original)
            name, qid, source = original["name"], original["qid"], original["task_id"]
        else:
            name = str(
                rng.choice(["CheckT1", "CheckT2Echo", "CheckRamsey", "X90InterleavedRandomizedBenchmarking"])
            )
            qid, source = str(int(rng.integers(self.topology.num_qubits))), None
        run = self.engine.run_task(
            TASKS[name], Target(qid, int(qid)), execution, start, source_task_id=source
        )
        return [run], run.doc["end_at"] + timedelta(seconds=STEP_GAP_S), ""


def _existing(db: Database[dict[str, Any]]) -> list[str]:
    names = set(db.list_collection_names())
    return [c for c in DEMO_COLLECTIONS if c in names and db[c].find_one({}, {"_id": 1}) is not None]


def seed_demo(
    db: Database[dict[str, Any]],
    spec: DemoSpec | None = None,
    progress: Progress | None = None,
    *,
    reset: bool = False,
    config_dir: Path | None = None,
) -> SeedReport:
    """Fill ``db`` with the demo lab; refuse a database that already has lab data unless ``reset``.

    ``reset=True`` deletes the documents of the demo collections first (wipe and reseed; the
    collections and their indexes stay). Deterministic: the same spec (seed and ``end_at``) gives
    identical documents. ``progress(done, total)`` is called after each
    execution; ``config_dir`` overrides where ``topologies/*.yaml`` are read from.
    """
    spec = spec or DemoSpec.default()
    spec.validate()
    existing = _existing(db)
    if existing and not reset:
        raise DemoDataExistsError(
            f"database '{db.name}' already has data in {existing}; refusing to mix demo data into it. "
            "Use `qdash demo seed --reset` (or seed_demo(..., reset=True)) to wipe them and reseed"
        )
    for name in existing:
        db[name].delete_many({})  # keep the collection and its indexes (serve created them)
    # First, so the embedded store knows these collections are large by design while they fill.
    db[META_COLLECTION].replace_one(
        {"_id": DEMO_MARKER_ID},
        {"_id": DEMO_MARKER_ID, "seed": spec.seed, "scale": spec.scale, "seeded_at": datetime.now(UTC)},
        upsert=True,
    )
    started = time.perf_counter()
    end = spec.resolved_end()
    rng = np.random.default_rng([spec.seed, 0])
    reviewer = DemoReviewer()
    sink = Sink(db, spec.chunk_size, prepare=reviewer if spec.ai_reviews else None)
    report = SeedReport(seed=spec.seed, scale=spec.scale, end_at=end.isoformat())
    runners: list[_ChipRun] = []
    for index, chip in enumerate(spec.chips):
        topology = load_topology(chip.topology_id, config_dir)
        physics = ChipPhysics(topology, chip.days, np.random.default_rng([spec.seed, 1 + index]))
        runners.append(_ChipRun(chip, topology, ChipEngine(chip, topology, physics, sink), spec))
    plans = _plan(spec, end, rng)
    for index, runner in enumerate(runners):
        chip_plans = [p for p in plans[runner.plan.project_id] if p.chip_index == index]
        one_q = [p.execution_id for p in chip_plans if p.kind.startswith("1q")]
        reviewer.add_chip(runner.plan, runner.engine.physics.special, one_q, runner.topology.num_qubits)
    total = sum(len(p) for p in plans.values())
    done = 0
    for project_plans in plans.values():
        for planned in project_plans:
            runners[planned.chip_index].run(planned, sink)
            done += 1
            if progress is not None:
                progress(done, total)
    _static_documents(spec, end, runners, sink, report)
    sink.flush()
    report.counts.update(sink.counts)
    report.elapsed_s = time.perf_counter() - started
    return report


def _static_documents(
    spec: DemoSpec, end: datetime, runners: list[_ChipRun], sink: Sink, report: SeedReport
) -> None:
    """Projects, users, memberships, chips and the current-state documents; fills the report."""
    created = end - timedelta(days=max(c.installed_days_before_end for c in spec.chips) + 30)
    system_info = {"created_at": created, "updated_at": created}
    for project in spec.projects:
        report.projects[project.project_id] = project.name
        sink.add(
            "project",
            {
                "_id": project.project_id,
                "project_id": project.project_id,
                "name": project.name,
                "owner_username": project.owner,
                "system_info": system_info,
            },
        )
    for user in spec.users:
        sink.add(
            "user",
            {
                "_id": user.username,
                "username": user.username,
                "access_token_hash": hash_token(user.token),
                "disabled": user.disabled,
                "default_project_id": user.default_project_id,
                "system_info": system_info,
            },
        )
        for project_id, role in user.memberships:
            sink.add(
                "project_membership",
                {
                    "_id": f"{project_id}:{user.username}",
                    "project_id": project_id,
                    "username": user.username,
                    "role": role,
                    "system_info": system_info,
                },
            )
        report.users.append(
            UserReport(
                user.username, user.token, user.default_project_id, dict(user.memberships), user.disabled
            )
        )
    for runner in runners:
        plan, topology, special = runner.plan, runner.topology, runner.engine.physics.special
        installed = installed_at(end, plan)
        sink.add(
            "chip",
            {
                "_id": f"{plan.project_id}:{plan.chip_id}",
                "project_id": plan.project_id,
                "chip_id": plan.chip_id,
                "username": plan.username,
                "size": topology.num_qubits,
                "topology_id": plan.topology_id,
                "installed_at": installed,
                "current_cooldown_id": runner.cooldown_id or None,
                "system_info": {"created_at": installed, "updated_at": installed},
            },
        )
        runner.engine.finish(installed)
        dates = runner.tls_dates or ["", ""]
        report.chips.append(
            ChipReport(
                project_id=plan.project_id,
                chip_id=plan.chip_id,
                topology_id=plan.topology_id,
                username=plan.username,
                num_qubits=topology.num_qubits,
                num_couplings=len(topology.couplings),
                days=plan.days,
                bad_qubits=special.bad,
                t1_degrading_qubit=special.t1_degrading,
                tls_qubit=special.tls,
                tls_days=(dates[0], dates[-1]),
                mediocre_qubits=special.mediocre,
                execution_ids=runner.report_ids,
                aborted_execution_id=runner.aborted,
            )
        )
