"""Tool benchmark: latency per tool, what the model sees vs the raw result, and the schema budget.

For each tool (one representative call each, plus the modes whose cost differs, through the same
executor the agent uses: validation, guards, data store, compaction, size guard) it reports p50/p95
latency over ``--repeats`` fresh turns, the raw result's size (the implementation's JSON before any
wrapper) and the size of what the model sees, in characters and o200k tokens (bpe-openai, offline).
It ends with the total size of the tool definitions vs upstream's 12,627 characters.

Data: the demo lab at ``default`` scale, and at ``lab`` scale (144 qubits × 365 days;
``--lab-days N`` shortens it) unless ``--skip-lab``. Each scale lives in its own embedded store
under ``--data-dir`` and is seeded on first use (default: minutes; lab: much longer on the
embedded store), then reused.

History axis (``--history``): one 64-qubit chip (``DemoSpec.history``: one daily calibration, no
reruns) at 28, 91 and 364 days of history (``--history-days``), every tool at each size, then
p50/p95 per tool per size and the growth ratio of the longest to the shortest history. Each case
runs once untimed first (the process's first such call) and then ``--repeats`` times, on stores
warmed up as ``qdash serve`` warms them (``db/warmup.py``); CPU time per call is reported beside the
wall time, since on a shared machine it is the load-independent measure.

First calls (``--first-repeats``, history axis only): each case's first call in a fresh process,
``--first-repeats`` times: the store is loaded once per size and a child is forked per call (a
fresh process's state: no map built, nothing cached), in three settings: ``cold`` (no warm-up: the
store before it, each call builds its maps), ``racing`` (the question arrives as the server becomes
ready: the warm-up thread starts with it) and ``warmed`` (after the warm-up finished); p95 wall
(and CPU, cold and warmed: racing's process CPU includes the warm-up) and the maps the call built,
with warmed/steady p95 ratios from the same run. The warm-up's own CPU time and memory (RSS) are
printed per size. A forked child pays copy-on-write faults on every page it writes (a cold call
touches the whole collection it maps), which a fresh ``qdash serve`` does not: cold and racing
numbers are upper bounds. The sizes are
open together and take turns call by call, so a burst of load on the shared machine hits each size
alike (run one size after the other, a few-millisecond call's 364/28 ratio swung between 0.5 and
1.6 from run to run). Current-state
tools (chip summary, compare, heatmap latest, qubit parameters) should stay flat (ratio ≤ 1.5, p95 ≤
300 ms at 365 days); windowed series (≤ 30 runs per qubit) p95 ≤ 1 s. The long-tail modes (counts
over a window by qid/task/execution, "since", a figures search, chip-wide couplings, one execution
in detail, two compared, task knowledge) must meet p95 ≤ 300 ms at a year and longest/shortest ≤
1.5.

Like for like, hence whole weeks: the demo schedules a weekly 1Q run every 7th day and a 2Q run
every 2nd day, counted from each history's first day. At 30 and 365 days the newest days differed
(at 30 d the newest 1Q-Calibration was a daily one, 194 runs, and the last 3 days held one 2Q
execution; at 365 d the newest was the weekly one, 322 runs, and the last 3 days held two), so the
ratio compared different work; at 28 and 364 days a fixed window holds the same runs. The documents
returned say how much of a difference is the data's; the documents examined beside them, whether the
reads select only what they return.

Run: ``nice .venv-ci/bin/python bench/tools.py [--skip-lab | --lab-days N] [--history [--skip-default]]
[--repeats 7] [--first-repeats 5] [--only get_task_knowledge,...] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bpe_openai
from pymongo.database import Database

from qdash.copilot.service import ANALYSIS_TOOL, CopilotDataService
from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.jsonsafe import dumps, json_safe
from qdash.copilot.tools.registry import ToolRegistry
from qdash.copilot.tools.spec import ToolContext
from qdash.db import close_database, open_database, start_warm_up
from qdash.db.fixes import LinearCursor
from qdash.db.indexes import ensure_indexes
from qdash.db.store import EmbeddedCollectionStore
from qdash.db.warmup import warm_up
from qdash.demo import DemoSpec, seed_demo
from qdash.logging import configure_logging
from qdash.repositories.chips import latest_chip_id
from qdash.repositories.scope import ProjectScope
from qdash.sandbox import SandboxUnavailableError, start_sandbox, stop_sandbox
from qdash.settings import Settings, load_settings

UPSTREAM_SCHEMA_CHARS = 12_627
PROJECT, USER = "proj-demo", "alice"
ENCODING = bpe_openai.get_encoding("o200k_base")
ANALYSIS_CODE = (
    "import statistics\n"
    "rows = data['t1']['qubits']\n"
    "print(len(rows), statistics.mean(r['latest'] for r in rows if r['latest'] is not None))"
)


class Examined:
    """Documents the embedded store examined (a filter's candidates by equality or time range, the
    documents a sorted read with a limit tested in time order, those a count by bisection tested,
    or the whole collection): a
    load-independent measure of what a call costs as history grows; and the documents its cursors
    returned (``returned``), what the call needed: examined ≈ returned says the reads select well,
    and a difference between history lengths in both is the data's (a window holding one more
    execution), not the history kept."""

    count = 0
    returned = 0

    @classmethod
    def install(cls) -> None:
        original, ordered = EmbeddedCollectionStore.candidates, EmbeddedCollectionStore.first_in_order
        counted = EmbeddedCollectionStore.count
        emit = LinearCursor.__next__

        def counting_emit(cursor: LinearCursor) -> Any:
            document = emit(cursor)
            cls.returned += 1
            return document

        def counting(store: EmbeddedCollectionStore, filter_: Any) -> list[Any] | None:
            found: list[Any] | None = original(store, filter_)
            cls.count += len(store) if found is None else len(found)
            return found

        def counting_ordered(store: EmbeddedCollectionStore, *args: Any) -> tuple[list[Any], int] | None:
            found: tuple[list[Any], int] | None = ordered(store, *args)
            cls.count += 0 if found is None else found[1]
            return found

        def counting_counted(store: EmbeddedCollectionStore, *args: Any) -> tuple[int, int] | None:
            found: tuple[int, int] | None = counted(store, *args)
            cls.count += 0 if found is None else found[1]
            return found

        EmbeddedCollectionStore.count = counting_counted  # type: ignore[method-assign, unused-ignore]
        EmbeddedCollectionStore.candidates = counting  # type: ignore[method-assign, assignment, unused-ignore]
        EmbeddedCollectionStore.first_in_order = counting_ordered  # type: ignore[method-assign, assignment, unused-ignore]
        LinearCursor.__next__ = counting_emit  # type: ignore[method-assign, unused-ignore]


def tokens(text: str) -> int:
    return len(ENCODING.encode(text))


def cases(db: Database[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One representative, successful call per tool on the demo lab; a key ``"<tool> <mode>"`` is one
    more call of that tool (a mode whose cost differs: one execution in detail, two compared)."""
    scope = ProjectScope(db, PROJECT)
    chip = latest_chip_id(scope)
    version = db.parameter_versions.find_one(
        {"project_id": PROJECT, "chip_id": chip, "parameter_name": "t1", "qid": "16"}, sort=[("version", -1)]
    )
    entity = version["entity_id"] if version else "t1:16:none:none"
    query = {"project_id": PROJECT, "chip_id": chip, "name": "1Q-Calibration"}
    newest = [e["execution_id"] for e in db.execution_history.find(query).sort("start_at", -1).limit(2)]
    per_cooldown = {"parameter_name": "t1", "cooldowns": True}
    return {
        "get_qubit_params": {"qid": "16"},
        "get_latest_task_result": {"task_name": "CheckT1", "qid": "16"},
        "get_task_history": {"task_name": "CheckT1", "qid": "16", "last_n": 10},
        "get_parameter_timeseries": {"parameter_name": "t1", "qid": "16", "last_n": 30},
        "execute_python_analysis": {"code": ANALYSIS_CODE},
        "get_chip_summary": {},
        "get_coupling_params": {"qubit_id": "16"},
        "get_coupling_params chip-wide": {"param_names": ["zx90_gate_fidelity"]},
        "get_execution_history": {"last_n": 10},
        "compare_qubits": {"qids": ["0", "1", "2", "16"]},
        "get_chip_topology": {},
        "search_task_results": {"qid": "16", "last_n": 10},
        "search_task_results 7d by qid": {"since": "7d", "status": "failed", "group_by": "qid"},
        "search_task_results 7d flagged": {"since": "7d", "review": "flagged", "group_by": "qid"},
        "search_task_results 7d by task": {"since": "7d", "group_by": "task"},
        "search_task_results 7d by execution": {"since": "7d", "group_by": "execution"},
        "search_task_results since 3d": {"since": "3d", "last_n": 10},
        "search_task_results figures": {"task_name": "CheckT1", "qid": "16", "status": "failed", "last_n": 5},
        "get_calibration_notes": {"qid": "16", "last_n": 3},
        "get_parameter_lineage": {"parameter_name": "t1", "qid": "16", "last_n": 10},
        "get_provenance_lineage_graph": {"entity_id": entity, "max_depth": 5},
        "generate_chip_heatmap": {"metric_name": "t1"},
        "get_chip_parameter_timeseries": {"parameter_name": "t1", "last_n": 30},
        "list_available_parameters": {"qid": "16"},
        "get_task_knowledge": {"task_name": "CheckT1"},
        "get_execution_history execution_id": {"execution_id": newest[0]},
        "get_execution_history compare_to": {"execution_id": newest[0], "compare_to": newest[1]},
        "get_execution_history cooldowns": {"cooldowns": True},
        "get_chip_parameter_timeseries cooldowns": per_cooldown,
        # like for like: every cool-down of both history lengths holds 2 T1 values a qubit
        "get_chip_parameter_timeseries cooldowns last 2": {**per_cooldown, "last_n": 2},
    }


def open_lab(
    scale: str, data_dir: Path, days: int | None = None
) -> tuple[Database[dict[str, Any]], Settings]:
    """The embedded store of one scale (``lab-<days>d`` when shortened, ``history-<days>d``), seeded
    on first use."""
    label = scale if days is None else f"{scale}-{days}d"
    settings = load_settings(database={"data_dir": str(data_dir / label), "mongo_uri": None})
    db = open_database(settings.database)
    if db.chip.find_one({"project_id": PROJECT}) is None:
        print(f"[{label}] seeding the demo lab (once; reused from {data_dir / label})…", file=sys.stderr)
        started = time.perf_counter()
        ensure_indexes(db)
        if scale == "history":
            spec = DemoSpec.history(days or 365)
        else:
            spec = DemoSpec.for_scale(scale)
            spec = spec if days is None else spec.with_days(days)
        seed_demo(db, spec)
        print(f"[{label}] seeded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    gc.freeze()  # as `qdash serve` does once the store is loaded (api/lifespan.py): no full GC passes
    return db, settings


def served(scale: str, data_dir: Path, days: int | None = None) -> tuple[Database[dict[str, Any]], Settings]:
    """``open_lab`` and the start-up warm-up ``qdash serve`` runs (its thread, waited for here)."""
    db, settings = open_lab(scale, data_dir, days)
    warming = start_warm_up(db)
    if warming is not None:
        warming.done.wait()
    return db, settings


async def raw_size(
    db: Database[dict[str, Any]], settings: Settings, name: str, args: dict[str, Any], sandbox: Any
) -> str:
    """The implementation's own JSON (what upstream would have sent), before any wrapper."""
    spec = next(s for s in SPECS if s.name == name)
    if name == ANALYSIS_TOOL:
        if sandbox is None:
            return "{}"
        service = CopilotDataService(ToolContext(db, PROJECT, USER, settings, "bench", sandbox=sandbox))
        reply = await sandbox.run(args["code"], await asyncio.to_thread(service.data_store().snapshot))
        shown: str = dumps(json_safe(reply.to_dict()))
        return shown
    ctx = ToolContext(db=db, project_id=PROJECT, username=USER, settings=settings)
    parsed = spec.args_model.model_validate(args)
    text: str = await asyncio.to_thread(lambda: dumps(json_safe(spec(ctx, parsed))))
    return text


async def bench_scales(
    stores: Sequence[tuple[str, int | None]], data_dir: Path, repeats: int, sandbox: Any, *, only: str = ""
) -> list[dict[str, Any]]:
    """Every case on every store, the stores taking turns call by call (one store per repeat
    round each), so load that comes and goes on a shared machine hits every size alike and the
    ratios between them are same-run ratios."""
    opened = [await asyncio.to_thread(served, scale, data_dir, days) for scale, days in stores]
    labels = [scale if days is None else f"{scale}-{days}d" for scale, days in stores]
    rows: list[dict[str, Any]] = []
    try:
        wanted = {name.strip() for name in only.split(",") if name.strip()}
        per_store = []
        for db, settings in opened:
            every = await asyncio.to_thread(cases, db)
            calls = {case: args for case, args in every.items() if _wanted(case, wanted)}
            service = CopilotDataService(ToolContext(db, PROJECT, USER, settings, "bench", sandbox=sandbox))
            per_store.append((calls, service))
        for case in per_store[0][0]:
            name = case.split()[0]
            samples: list[dict[str, Any]] = [{"wall": [], "cpu": []} for _ in per_store]
            for repeat in range(repeats + 1):
                for (calls, service), sample in zip(per_store, samples, strict=True):
                    await _timed_call(calls, service, case, name, sample, first=repeat == 0)
            for label, (db, settings), (calls, _), sample in zip(
                labels, opened, per_store, samples, strict=True
            ):
                raw = await raw_size(db, settings, name, calls[case], sandbox)
                rows.append(_row(label, case, sample, raw))
                print(_line(rows[-1]), flush=True)
    finally:
        for db, _ in opened:
            await asyncio.to_thread(close_database, db)
    return rows


def _wanted(case: str, wanted: set[str]) -> bool:
    """Whether ``--only`` names this case or its tool (nothing named: every case)."""
    return not wanted or bool({case, case.split(maxsplit=1)[0]} & wanted)


async def _timed_call(
    calls: dict[str, dict[str, Any]],
    service: CopilotDataService,
    case: str,
    name: str,
    sample: dict[str, Any],
    *,
    first: bool,
) -> None:
    """One call of ``case`` in a fresh turn, its wall and CPU time and documents into ``sample``."""
    turn = service.run_context()  # a fresh turn each time
    if name == ANALYSIS_TOOL:  # the analysis reads the stored chip time series
        await service.call("get_chip_parameter_timeseries", calls["get_chip_parameter_timeseries"], turn)
    Examined.count = Examined.returned = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    output = await service.call(name, calls[case], turn)
    elapsed, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu_started) * 1000
    if first:  # untimed: first calls are measured in fresh processes (``first_calls``)
        return
    sample["wall"].append(elapsed)
    sample["cpu"].append(cpu_ms)
    sample["examined"], sample["returned"] = Examined.count, Examined.returned
    sample["text"], sample["is_error"] = output.model_text, output.is_error


def _row(scale: str, case: str, sample: dict[str, Any], raw: str) -> dict[str, Any]:
    timings, cpu = sorted(sample["wall"]), sorted(sample["cpu"])
    text, is_error = sample.get("text", ""), sample.get("is_error", False)
    return {
        "scale": scale, "tool": case, "ok": not is_error,
        "p50_ms": statistics.median(timings), "p95_ms": _p95(timings),
        "cpu_p50_ms": statistics.median(cpu), "cpu_p95_ms": _p95(cpu), "examined": sample["examined"],
        "returned": sample["returned"],
        "raw_chars": len(raw), "raw_tokens": tokens(raw),
        "model_chars": len(text), "model_tokens": tokens(text),
        "error": json.loads(text).get("error") if is_error else None,
    }  # fmt: skip


def _p95(sorted_ms: list[float]) -> float:
    """Nearest-rank 95th percentile (the maximum for fewer than 20 samples)."""
    return sorted_ms[min(len(sorted_ms) - 1, round(0.95 * (len(sorted_ms) - 1) + 0.5))]


FIRST_MODES = ("cold", "racing", "warmed")


def first_calls(
    stores: Sequence[tuple[str, int | None]], data_dir: Path, repeats: int, *, only: str = ""
) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[str, dict[str, float]]]:
    """Each case's first call in a fresh process, ``repeats`` times per setting (``FIRST_MODES``,
    see the module docstring), per store; and per store the warm-up's CPU time and memory. Call it
    before any thread starts (it forks)."""
    wanted = {name.strip() for name in only.split(",") if name.strip()}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    costs: dict[str, dict[str, float]] = {}
    for scale, days in stores:
        label = scale if days is None else f"{scale}-{days}d"
        db, settings = open_lab(scale, data_dir, days)
        try:
            calls = {
                case: args
                for case, args in cases(db).items()
                if _wanted(case, wanted)
                and not case.startswith(ANALYSIS_TOOL)  # its sandbox: not the store's
            }
            _detach_journal(db)  # the children must never write the parent's SQLite file
            for store in _stores(db):
                store._equality.clear()  # what opening and ``cases`` read: a fresh server has no map
            samples: dict[tuple[str, str], list[dict[str, float]]] = {}
            for mode in FIRST_MODES:
                if mode == "warmed":
                    costs[label] = _warm_up_cost(db)
                for _ in range(repeats):
                    for case in calls:
                        samples.setdefault((case, mode), []).append(
                            _in_child(db, settings, calls, case, mode)
                        )
            for case in calls:
                found[label, case] = {mode: _summary(samples[case, mode]) for mode in FIRST_MODES}
                print(f"{label:<14}{case:<38}first calls {_first_line(found[label, case])}", flush=True)
        finally:
            close_database(db)
    return found, costs


def _detach_journal(db: Database[dict[str, Any]]) -> None:
    """Writes stay in memory from here on (a child's tool calls write their data store)."""
    server = db.client._store  # type: ignore[attr-defined]
    server.journal = None
    for database in server._databases.values():
        database._journal = None
        for collection in database._collections.values():
            collection._journal = None


def _stores(db: Database[dict[str, Any]]) -> list[EmbeddedCollectionStore]:
    return [db[name]._store for name in db.list_collection_names()]  # type: ignore[attr-defined]


def _warm_up_cost(db: Database[dict[str, Any]]) -> dict[str, float]:
    """The warm-up ``qdash serve`` runs at start-up, here in the parent: its CPU time, wall time
    and the memory it adds (RSS)."""
    rss, cpu, started = _rss_mb(), time.process_time(), time.perf_counter()
    built = warm_up(db)
    cost = {
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - started,
        "rss_mb": _rss_mb() - rss,
    }
    gc.freeze()  # as the warm-up thread does when it is done
    print(
        f"warm-up: {cost['cpu_s']:.2f} s CPU, {cost['wall_s']:.2f} s wall, +{cost['rss_mb']:.0f} MB RSS, "
        f"{built}"
    )
    return {**cost, **built}


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _in_child(
    db: Database[dict[str, Any]], settings: Settings, calls: dict[str, dict[str, Any]], case: str, mode: str
) -> dict[str, float]:
    """One first call of ``case`` in a forked child (see the module docstring); its timings."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one call, its numbers to the parent, then gone (no cleanup of the parent's)
        os.close(read)
        try:
            os.write(write, json.dumps(asyncio.run(_first_call(db, settings, calls, case, mode))).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        reply = pipe.read()
    os.waitpid(pid, 0)
    if not reply:
        raise RuntimeError(f"the child measuring {case} ({mode}) died without an answer")
    measured: dict[str, float] = json.loads(reply)
    return measured


async def _first_call(
    db: Database[dict[str, Any]], settings: Settings, calls: dict[str, dict[str, Any]], case: str, mode: str
) -> dict[str, float]:
    await asyncio.to_thread(lambda: None)  # the worker pool a server already has
    service = CopilotDataService(ToolContext(db, PROJECT, USER, settings, "b"))
    maps = _maps_built(db)
    if mode == "racing":
        start_warm_up(db)  # as the server becomes ready; the question arrives at once
    started, cpu = time.perf_counter(), time.process_time()
    await service.call(case.split(maxsplit=1)[0], calls[case])
    wall, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
    return {
        "wall_ms": wall,
        "cpu_ms": cpu_ms,
        "maps_built": _maps_built(db) - maps if mode != "racing" else -1,
    }


def _maps_built(db: Database[dict[str, Any]]) -> int:
    return sum(store.inventory()["field_maps"] + store.inventory()["time_maps"] for store in _stores(db))


def _summary(samples: list[dict[str, float]]) -> dict[str, float]:
    return {
        "p95_ms": _p95(sorted(s["wall_ms"] for s in samples)),
        "cpu_p95_ms": _p95(sorted(s["cpu_ms"] for s in samples)),
        "maps_built": max(s["maps_built"] for s in samples),
        "samples": len(samples),
    }


def _first_line(first: dict[str, dict[str, float]]) -> str:
    cold, racing, warmed = (first[mode] for mode in FIRST_MODES)
    return (
        f"p95 cold {cold['p95_ms']:7.1f} ms (cpu {cold['cpu_p95_ms']:6.1f}, {cold['maps_built']:.0f} maps)  "
        f"racing {racing['p95_ms']:7.1f} ms  warmed {warmed['p95_ms']:6.1f} ms "
        f"(cpu {warmed['cpu_p95_ms']:5.1f}, {warmed['maps_built']:.0f} maps)  "
        f"over {warmed['samples']:.0f} processes"
    )


def _line(row: dict[str, Any]) -> str:
    status = "ok " if row["ok"] else "ERR"
    return (
        f"{row['scale']:<14}{row['tool']:<38}{status} p50 {row['p50_ms']:8.1f} ms  "
        f"p95 {row['p95_ms']:8.1f} ms  cpu p95 {row['cpu_p95_ms']:7.1f} ms  "
        f"docs {row['examined']:>7} ({row['returned']:>6} returned)  "
        f"raw {row['raw_chars']:>8} ch {row['raw_tokens']:>7} tok  model {row['model_chars']:>6} ch "
        f"{row['model_tokens']:>5} tok" + (f"  ({row['error'][:60]})" if row["error"] else "")
    )


CURRENT_STATE = ("get_chip_summary", "compare_qubits", "generate_chip_heatmap", "get_qubit_params")


def history_report(rows: list[dict[str, Any]], days: list[int]) -> list[str]:
    """p50/p95 wall and p95 CPU per tool per history length, the growth ratios longest/shortest
    (wall p50, wall p95, CPU p95: the load-independent one on a shared machine) and the documents
    examined (returned)."""
    by_scale = {(r["scale"], r["tool"]): r for r in rows}
    first, last = f"history-{days[0]}d", f"history-{days[-1]}d"
    head = "".join(f"{f'{d} d p50/p95 (cpu p95)':>28}" for d in days)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [
        f"\nhistory axis (64 qubits; load average {load} on {os.cpu_count()} cores): {'tool':<31}{head}"
        f"   ratio {days[-1]}/{days[0]} p50  p95  cpu95  "
        f"docs examined (returned) {'/'.join(map(str, days))} d"
    ]
    for tool in dict.fromkeys(r["tool"] for r in rows if r["scale"] == first):
        cells = [by_scale.get((f"history-{d}d", tool)) for d in days]
        shown = "".join(
            f"{c['p50_ms']:>10.1f}/{c['p95_ms']:<7.1f}({c['cpu_p95_ms']:6.1f}) " if c else f"{'-':>28}"
            for c in cells
        )
        low, high = by_scale.get((first, tool)), by_scale.get((last, tool))
        keys = ("p50_ms", "p95_ms", "cpu_p95_ms")
        ratio = (
            " ".join(f"{high[key] / low[key]:5.2f}" for key in keys)
            if low and high and all(low[key] > 0 for key in keys)
            else ""
        )
        kind = "current-state" if tool in CURRENT_STATE else ""
        examined = "/".join(f"{c['examined']} ({c['returned']})" if c else "-" for c in cells)
        lines.append(f"{kind:<26}{tool:<31}{shown}   {ratio:<18}  {examined}")
    return lines


def first_call_report(
    rows: list[dict[str, Any]], first: dict[tuple[str, str], dict[str, Any]], days: list[int]
) -> list[str]:
    """Per tool and history length, the first call's p95 wall ms in a fresh process, cold / racing
    the warm-up / after it, and after it / the steady p95 (both measured in this run)."""
    steady = {(r["scale"], r["tool"]): r for r in rows}
    head = "".join(f"{f'{d} d cold / racing / warmed':>34}{'warmed/steady':>15}" for d in days)
    lines = [f"\nfirst call in a fresh process, p95 wall ms: {'tool':<31}{head}   maps built cold/warmed"]
    for tool in dict.fromkeys(case for _, case in first):
        shown, built = "", []
        for d in days:
            cell, warm = first.get((f"history-{d}d", tool)), steady.get((f"history-{d}d", tool))
            if cell is None:
                shown += f"{'-':>49}"
                continue
            cold, racing, warmed = (cell[mode]["p95_ms"] for mode in FIRST_MODES)
            ratio = f"{warmed / warm['p95_ms']:.2f}" if warm and warm["p95_ms"] > 0 else "-"
            shown += f"{cold:>14.0f} / {racing:>6.0f} / {warmed:>6.1f}{ratio:>15}"
            built.append(f"{cell['cold']['maps_built']:.0f}/{cell['warmed']['maps_built']:.0f}")
        lines.append(f"{'':<44}{tool:<31}{shown}   {' '.join(built)}")
    return lines


def schema_budget() -> dict[str, int]:
    registry = ToolRegistry(SPECS)
    definitions = registry.definitions()
    spaced = json.dumps(definitions, ensure_ascii=False)
    compact = dumps(definitions)
    per_tool = sum(len(json.dumps(d, ensure_ascii=False)) for d in definitions)
    return {
        "tools": len(definitions), "chars_json_dumps": len(spaced), "chars_per_tool_sum": per_tool,
        "chars_compact": len(compact), "tokens_json_dumps": tokens(spaced), "tokens_compact": tokens(compact),
        "upstream_chars": UPSTREAM_SCHEMA_CHARS,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-lab", action="store_true", help="only the default demo (lab seeding is slow)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--lab-days", type=int, help="shorten the lab scale to this many days (365 takes very long to seed)"
    )
    parser.add_argument("--history", action="store_true", help="the history-length axis (64 qubits)")
    parser.add_argument("--history-days", default="28,91,364", help="history lengths, comma-separated")
    parser.add_argument(
        "--first-repeats", type=int, default=5, help="fresh processes per first call (history axis; 0: none)"
    )
    parser.add_argument("--skip-default", action="store_true", help="skip the default demo")
    parser.add_argument("--data-dir", type=Path, default=Path("var/bench-tools"))
    parser.add_argument("--json", type=Path, help="also write all numbers here")
    parser.add_argument("--only", default="", help="comma-separated tools (or '<tool> <mode>' cases) to run")
    options = parser.parse_args()
    configure_logging("WARNING")
    Examined.install()
    history_days = sorted(int(d) for d in options.history_days.split(",")) if options.history else []
    history = [("history", days) for days in history_days]
    first: dict[tuple[str, str], dict[str, Any]] = {}
    costs: dict[str, dict[str, float]] = {}
    if history and options.first_repeats > 0:  # before any thread starts: it forks
        first, costs = first_calls(history, options.data_dir, options.first_repeats, only=options.only)
    rows = asyncio.run(bench(options, history))
    budget = schema_budget()
    print(
        f"\nschemas: {budget['tools']} tools, {budget['chars_per_tool_sum']} chars (json.dumps per tool; "
        f"upstream {UPSTREAM_SCHEMA_CHARS}), {budget['chars_compact']} chars compact, "
        f"{budget['tokens_json_dumps']} o200k tokens ({budget['tokens_compact']} compact)"
    )
    for scale in sorted({r["scale"] for r in rows}):
        mine = [r for r in rows if r["scale"] == scale]
        print(
            f"{scale}: raw {sum(r['raw_tokens'] for r in mine)} o200k tokens → model "
            f"{sum(r['model_tokens'] for r in mine)} o200k tokens over {len(mine)} calls"
        )
    if history_days:
        print("\n".join(history_report(rows, history_days)))
    if first:
        print("\n".join(first_call_report(rows, first, history_days)))
        for label, cost in costs.items():
            print(f"warm-up {label}: {cost}")
    if options.json:
        firsts = [{"scale": scale, "tool": case, **modes} for (scale, case), modes in first.items()]
        numbers = {"rows": rows, "first_calls": firsts, "warm_up": costs, "schemas": budget}
        options.json.write_text(json.dumps(numbers, indent=2))


async def bench(options: argparse.Namespace, history: list[tuple[str, int | None]]) -> list[dict[str, Any]]:
    """The steady calls of every scale asked for (the sandbox started for the analysis tool)."""
    sandbox = None
    try:
        sandbox = await start_sandbox(load_settings().sandbox)
    except SandboxUnavailableError as exc:
        print(f"sandbox unavailable ({exc}); execute_python_analysis will report it", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    only = options.only
    try:
        if not options.skip_default:
            default = [("default", None)]
            rows += await bench_scales(default, options.data_dir, options.repeats, sandbox, only=only)
        if not options.skip_lab:
            lab = [("lab", options.lab_days)]
            rows += await bench_scales(lab, options.data_dir, options.repeats, sandbox, only=only)
        if history:
            rows += await bench_scales(history, options.data_dir, options.repeats, sandbox, only=only)
    finally:
        if sandbox is not None:
            await stop_sandbox()
    return rows


if __name__ == "__main__":
    main()
