"""API concurrency: 100 chat streams at once vs one alone, and the event loop's lag meanwhile.

What runs (everything real except the model): the production app (``create_app``) with the real
``Assistant``, the calibration tools on the demo lab (embedded store, in memory) and the sandbox
pool; the model is the fake LLM server in a separate process, answering every request after
``--delay`` seconds. Each chat turn is two model rounds: round 1 calls ``get_qubit_params`` and
``execute_python_analysis`` in parallel, round 2 is the final blocks answer. Streams go through the
ASGI interface in this process (the same event loop as the API, as under uvicorn), each to its
own SSE stream, and must end with a ``result`` event.

Targets, restated for this 2-core hardware (the sandbox's fork cost puts a floor of
≥ 1.33× under the heavy turn, measured and agreed):
- [A-light] the light turn (data tool, no sandbox): ``--streams`` concurrent vs one alone ≤ 1.3×;
- [A-heavy] the heavy turn (data tool + sandbox) printed beside its sandbox floor measured in the
  same run (1 + sandbox CPU-s / cores / one stream's wall time), excess over the floor ≤ 0.3×;
- [B] event-loop lag p99 ≤ 50 ms during the heavy streams, in every one of ``--runs`` runs (3).

Reported (every ratio from numbers measured in this run):
- the wall time of one stream alone, of ``--streams`` concurrent streams, and their ratio (a turn
  is I/O-bound, so concurrency should cost little on top of the model time);
- the event loop's lag (how late a 10 ms ticker wakes up) p50/p99/max while the
  concurrent streams run (target p99 ≤ 50 ms: nothing blocking runs on the loop), and again while
  the same two tools (one data query, one sandbox run) are called directly ``--streams`` times at
  once, without the model: that isolates our tools and sandbox path from the model client;
- the CPU the concurrent streams cost: this process (per stream; the event-loop thread apart, since
  one thread holding the GIL cannot use the second core), the fake model's process, and the whole
  machine (the box is shared: other processes' CPU is shown, not subtracted). When CPU per stream ×
  streams exceeds what the cores give in the model's wait time, the ratio target is out of reach
  whatever the event loop does; the line says so with the numbers;
- Python's garbage-collector pauses during the concurrent streams (a full collection walks every
  object of the in-memory store and blocks the loop for its whole length);
- a light turn (the same two model rounds, round 1 calls only ``get_qubit_params``: no sandbox),
  alone vs concurrent, so the API + engine + model-client overhead is visible without the heavy tool;
- the API layer alone: the same streams against a scripted assistant that only waits as long as
  the two model rounds would, so auth, limits, leases, SSE and saving the turn are measured
  without the model client and the tools;
- the API process's CPU milliseconds per light turn beside the API layer's alone, both from the
  concurrent streams of this run, and their ratio: what the engine, the model client and the data
  tool add to a turn. Work taken off the request path shows here first (the process also hosts the
  test client, whose share is in both numbers).

Measured on 2026-11-22 (2 shared cores, firecracker VM), the story so far:
- first version: the adapters used ``responses.create`` (the SDK's TypedDict transform of every
  body, a pydantic model per event, on the loop): 65–69 ms of loop CPU per stream, ratio 4.6, lag
  p99 470–650 ms; the built body through ``client.post``, events as dicts: ratio 2.7–3.0;
  ``gc.freeze()`` after start-up removed 150–190 ms full-collection stalls;
- session 2, in this order (heavy ratio / light ratio / API-layer ratio, lag p99):
  start 2.74 / 2.46 / 1.67, 110 ms (31.7 ms CPU per heavy stream, 17.2 ms per API-layer stream);
  model clients on aiohttp (the SDK's ``DefaultAioHttpClient``; httpx2's pool polled every idle
  connection on each request and close): loop CPU of a light turn 18.6 → ~10 ms;
  embedded store: TTL passes at most once a second (the library scanned TTL collections on every
  access) and equality maps per indexed field (queries by user, session, chip, qubit read their
  bucket, not the collection): API layer 17.2 → 6.8 ms per stream, ratio 1.67 → 1.28;
  the bench now indexes the store as the server does and gives each stream its own user (before,
  one user's 100 leases were scanned and sorted per admission, and sessions hit the per-user cap);
  our SSE reader (events nobody reads are never decoded) and orjson request bodies; the tool
  registry built once instead of per turn; 4 threads for blocking work on the embedded store
  (GIL-bound calls: 40 + 16 runnable threads made the loop wait; tool-pair lag p99 66–91 → 11–20
  ms); sandbox spares prefault only when idle (sandbox CPU per call ~24 → ~18 ms);
  async getters for settings/assistant/database (no thread hop per request), the Tool protocol
  check cached per type; end (3 runs, load 0.8): heavy 1.82–1.90, light 1.40–1.57, API layer
  1.18–1.21 (target met), lag p99 37–47 ms (target met; 53–63 ms in 2 of 9 runs earlier today);
- why [A] stays out of reach on this machine: a fork + exit of the ~130 MB zygote alone costs
  ~17 ms of machine CPU here (8.5 ms wall; measured with 100 bare forks), so 100 sandbox calls need
  ≥ 0.85 s of both cores after the first model answer, more than the 0.6 s the target allows even
  if the API cost nothing; and the API process spends ~16 ms of GIL-bound CPU per stream (SDK
  request machinery ~27 % of the loop, our stream reader ~11 %, SSE out ~10 %, the assistant ~9 %,
  FastAPI ~5 %; embedded-store calls ~5 ms in threads), 1.6 s for 100 streams, bunched at the same
  three moments; the light turn (no sandbox) misses for that second reason. More cores with
  replicas on MongoDB are the lever; one 2-core process is not.

Restated targets, 2026-11-25 (3 runs, load 0.4-0.6, after this session's changes): light ratio
1.40 / 1.51 / 1.50 (target 1.30: missed); heavy 1.70 / 1.86 / 1.91 beside measured sandbox floors
1.33 / 1.37 / 1.43, excess 0.37 / 0.49 / 0.48 (target 0.30: missed); lag p99 43 / 34 / 48 ms (met
3 of 3); API layer alone 1.22. The light turn spends ~13-16 ms of process CPU per stream (event
loop ~7-9 ms) against 0.6 s of allowed overhead for 100 streams on one GIL: the lever is still
fewer event-loop milliseconds per stream (the SDK request path, our SSE out) or more processes.

Session 12 (2026-11-25, evening): the auth lookup (a ``$or`` of hashed and plain token) scanned
every user on the embedded store, ``find_keys`` made one point read per key; both fixed (API layer
alone 6.8 → 4.2-4.9 ms CPU per stream, ratio 1.22 → 1.12-1.16). The light turn's CPU floor (API
process + fake model CPU-s over both cores, measured per run) is now printed beside its ratio.
3 runs, load 0.5-0.9: light ratio 1.42 / 1.38 / 1.46 beside CPU floors 1.46 / 1.45 / 1.48 (the
ratio sits on its floor: the CPU these streams need does not fit the 2 cores in 0.6 s, however it
is scheduled; ≤ 1.30 needs roughly half the CPU per stream, the API layer alone already uses 4-5
ms of the ~6 ms that would leave); heavy excess over the sandbox floor 0.42 / 0.49 / 0.39 (floors
1.38 / 1.42 / 1.36); lag p99 74 / 69 / 34 ms. The lag target held 3 of 3 in the morning on the same
machine; an A/B run of the morning's code (c664506) beside today's in the evening gave 75 / 55 ms
against 69 / 67 ms: the machine's state, not this code, moved it.

2026-11-28: the API process's CPU per light turn is printed beside the API layer alone's (same
run) and their ratio, the number to compare when heavy work leaves the request path. 2 runs at load
13-14 (other work on the machine: every wall-time ratio is meaningless, CPU per turn inflated ~2.5×
against the 13-16 ms above): light turn 34.7 / 40.4 ms, API layer alone 11.9 / 15.1 ms, ratio 2.92 /
2.68.

2026-11-28, later: three costs that grew with the number of events or the wall time, not with the
work: the SSE stream made a task and an ``asyncio.wait`` per engine event, text deltas included
(they make no frame in the default mode; now its one reader task reads past them); the engine's
token estimate deep-copied the items (``dataclasses.asdict``) and escaped every tool output again
with ``json.dumps`` each round (now orjson on the dataclasses); each stream polled its own lease for
a stop request every second, a thread hop and a lookup (now one query for the process's running
streams, at most two a second). Before (main fcb91d9 with those three commits reverted) and after,
alternating in one session, 3 runs each, load 8.3-12.0: API process CPU per light turn 35.5 / 22.8 /
31.6 -> 26.5 / 29.8 / 27.4 ms (median 31.6 -> 27.4; event-loop thread 22.3 / 14.7 / 19.7 -> 16.6 /
17.4 / 17.2 ms), API layer alone 11.3 / 9.8 / 10.4 -> 9.9 / 9.8 / 9.3 ms, ratio 3.14 / 2.34 / 3.03 ->
2.67 / 3.03 / 2.95. At this load the spread between runs of the same code (22.8-35.5 ms) is larger
than the change: about 2-4 ms of a turn's ~28, mostly event-loop time.

2026-12-06: the tools' executors are made once per registry instead of once per turn (the turn's
state reaches them as the engine's ``RunContext``). Before (b8489b0) and after (a65575b), alternating
in one session on a quiet machine, 2 runs each: API process CPU per light turn 9.5 / 9.4 -> 8.7 /
8.9 ms, API layer alone 3.9 / 3.7 -> 3.8 / 4.0 ms, ratio 2.46 / 2.52 -> 2.30 / 2.21.

Each concurrent stream belongs to its own user (``bench-<i>``, members of the demo project), as 100
people would, so the per-user stream cap and rate limit keep their production defaults.
Run: ``python bench/concurrency.py [--streams 100 --delay 1.0 --runs 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# tests.support (the test doubles the wheel does not ship) is importable from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from qdash.api.app import create_app
from qdash.api.lifespan import apply_thread_budget
from qdash.copilot.assistant import Assistant
from qdash.db import open_database
from qdash.db.indexes import ensure_indexes
from qdash.demo import seed_demo
from qdash.demo.spec import DemoSpec
from qdash.engine.events import Final, Status
from qdash.evaluation.fake_llm import FakeLLMServer, RecordedRequest, call
from qdash.logging import configure_logging
from qdash.models.answer import Answer
from qdash.models.auth import ProjectMembership, User, hash_token
from qdash.sandbox import start_sandbox, stop_sandbox
from qdash.settings import DatabaseSettings, Settings
from tests.support.settings import fake_model, settings_on_fake

ANSWER = json.dumps(
    {
        "blocks": [
            {"type": "text", "content": "**T1** of Q16 is fine.", "chart": None},
            {"type": "chart", "content": None, "chart": {"data": [{"type": "bar", "x": ["Q16"], "y": [42]}]}},
        ],
        "assessment": "good",
    }
)
CODE_WITH_DATA = "values = [1.0, 2.0, 3.0]\nimport statistics\nresult = {'mean': statistics.mean(values)}"


LIGHT = "[light]"
PROJECT = "proj-demo"


def respond(request: RecordedRequest) -> Any:
    """Round 1: two parallel tool calls (light turn: the data tool only); round 2: the final answer."""
    if request.tool_outputs():
        return ANSWER
    if LIGHT in request.last_user_text():
        return [call("get_qubit_params", {"chip_id": "64Qv3", "qid": "16"})]
    return [
        call("get_qubit_params", {"chip_id": "64Qv3", "qid": "16"}),
        call("execute_python_analysis", {"code": CODE_WITH_DATA}),
    ]


def serve_fake(delay: float, ready: Any) -> None:
    """Child process: the fake LLM answering forever (its own GIL, like a real model server)."""
    fake = FakeLLMServer(response_delay_s=delay)
    fake.start()
    fake.respond_with(respond)
    ready.put(fake.openai_base_url)
    while True:
        time.sleep(3600)


class SleepyAssistant:
    """The API layer alone: the assistant's status sequence around ``seconds`` of waiting (no SDK,
    no tools), so the API's own cost (auth, limits, leases, SSE, saving the turn) is measured."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def chat(self, scope: Any, request: Any, decision: Any = None) -> Any:
        return self._run()

    async def _run(self) -> Any:
        yield Status("load_config", "Loading configuration...")
        yield Status("run_chat", "AI is responding...")
        yield Status("thinking", "AI is thinking...", completed_tools=[])
        await asyncio.sleep(self.seconds)
        yield Final(Answer.model_validate_json(ANSWER))


class LagProbe:
    """A 10 ms ticker on the loop; lag = how late each tick wakes up."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(self.interval)
            self.samples.append(max(0.0, loop.time() - start - self.interval))

    def start(self) -> None:
        self.samples.clear()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> list[float]:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        return list(self.samples)


async def one_stream(client: httpx.AsyncClient, token: str, index: int, light: bool = False) -> float:
    started = time.perf_counter()
    tag = f" {LIGHT}" if light else ""
    response = await client.post(
        "/copilot/chat/stream",
        json={"message": f"How is the T1 of Q16? ({index}){tag}", "session_id": f"bench-{index}"},
        headers={"Authorization": f"Bearer {token}"},
    )
    elapsed = time.perf_counter() - started
    frames = [f for f in response.text.split("\n\n") if f.startswith("event: ")]
    if response.status_code != 200 or not frames or not frames[-1].startswith("event: result"):
        raise RuntimeError(f"stream {index} did not end with a result: {response.status_code} {frames[-1:]}")
    return elapsed


def add_users(db: Any, count: int) -> list[str]:
    """``count`` more members of the demo project, one per concurrent stream (as ``count`` people
    would be), so the per-user stream cap and rate limit stay at their production defaults."""
    tokens = [f"bench-token-{i}" for i in range(count)]
    names = [f"bench-{i}" for i in range(count)]
    db[User.collection].insert_many(
        [
            User(username=name, access_token_hash=hash_token(token), default_project_id=PROJECT).to_mongo()
            for name, token in zip(names, tokens, strict=True)
        ]
    )
    db[ProjectMembership.collection].insert_many(
        [ProjectMembership(project_id=PROJECT, username=name, role="editor").to_mongo() for name in names]
    )
    return tokens


async def tool_calls(client: httpx.AsyncClient, token: str, index: int) -> None:
    """The same two tools as a chat round, called directly (``POST /copilot/tools/{name}``)."""
    headers = {"Authorization": f"Bearer {token}"}
    session = f"bench-tools-{index}"
    calls = (
        ("get_qubit_params", {"chip_id": "64Qv3", "qid": "16"}),
        ("execute_python_analysis", {"code": CODE_WITH_DATA}),
    )
    for name, arguments in calls:
        response = await client.post(
            f"/copilot/tools/{name}?session_id={session}", json=arguments, headers=headers
        )
        if response.status_code != 200 or response.json()["is_error"]:
            raise RuntimeError(f"tool {name} failed: {response.text[:200]}")


def _proc_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (its threads included)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu(exclude: int) -> float:
    """CPU seconds of this process's other descendants (the sandbox zygote and its workers), reaped
    grandchildren included; ``exclude`` (the fake model) is left out."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    spent: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        spent[int(entry)] = sum(int(v) for v in fields[11:15]) / tick
    me, total = os.getpid(), 0.0
    for pid, seconds in spent.items():
        ancestor = parents.get(pid, 0)
        while ancestor > 1 and ancestor not in (me, exclude):
            ancestor = parents.get(ancestor, 0)
        if ancestor == me and pid != exclude:
            total += seconds
    return total


def _machine_busy() -> float:
    """CPU seconds all processes of the machine were busy (``/proc/stat``, idle and iowait excluded)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:8]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


@dataclass
class CpuUse:
    wall: float
    process: float
    loop_thread: float
    model: float
    sandbox: float
    machine: float


class CpuMeter:
    """CPU spent between ``start()`` and ``stop()``: this process, its event-loop thread (the caller),
    the fake model's process, the sandbox processes and the whole machine."""

    def __init__(self, model_pid: int) -> None:
        self.model_pid = model_pid
        self._start = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def _now(self) -> tuple[float, float, float, float, float, float]:
        return (
            time.perf_counter(),
            time.process_time(),
            time.thread_time(),
            _proc_cpu(self.model_pid),
            _children_cpu(self.model_pid),
            _machine_busy(),
        )

    def start(self) -> None:
        self._start = self._now()

    def stop(self) -> CpuUse:
        return CpuUse(*(b - a for a, b in zip(self._start, self._now(), strict=True)))


class GcPauses:
    """Garbage-collector pauses (all threads: a collection holds the GIL, so it stalls the loop too)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._started = 0.0
        self._on = False
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if not self._on:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((int(info["generation"]), time.perf_counter() - self._started))

    def start(self) -> None:
        self.pauses.clear()
        self._on = True

    def stop(self) -> str:
        self._on = False
        full = [d for g, d in self.pauses if g == 2]
        total = sum(d for _, d in self.pauses)
        return (
            f"{len(self.pauses)} collections, {total * 1000:.0f} ms in all, longest "
            f"{max((d for _, d in self.pauses), default=0.0) * 1000:.0f} ms; full (gen 2): {len(full)}, "
            f"longest {max(full, default=0.0) * 1000:.0f} ms; {len(gc.get_objects())} objects tracked"
        )


def cpu_lines(label: str, use: CpuUse, streams: int, delay: float) -> list[str]:
    """The CPU a phase cost, per stream, and the floor it puts under the concurrent wall time."""
    cores = os.cpu_count() or 1
    per_stream = use.process / streams
    loop_per_stream = use.loop_thread / streams
    others = max(0.0, use.machine - use.process - use.model - use.sandbox)
    return [
        f"CPU {label}: this process {use.process:.2f} s = {per_stream * 1000:.1f} ms per stream "
        f"(event-loop thread {loop_per_stream * 1000:.1f} ms, worker threads "
        f"{(per_stream - loop_per_stream) * 1000:.1f} ms); fake model process {use.model:.2f} s; "
        f"sandbox processes {use.sandbox:.2f} s; "
        f"other processes {others:.2f} s; machine busy {use.machine:.2f} of {use.wall * cores:.2f} "
        f"CPU-s ({cores} cores × {use.wall:.2f} s wall)",
        f"  floor from CPU: {streams} × {per_stream * 1000:.1f} ms / {cores} cores = "
        f"{streams * per_stream / cores:.2f} s even with perfect parallelism; the event-loop thread's "
        f"{use.loop_thread:.2f} s is serial (one GIL) and lands at the same moments for every stream "
        f"(start, each model answer), so it adds to the {2 * delay:.1f} s of model time instead of "
        f"hiding in it: observed {use.wall - 2 * delay:.2f} s on top, the ratio target allows "
        f"{0.3 * 2 * delay:.2f} s",
    ] + (
        [
            f"  floor from the sandbox alone: {use.sandbox:.2f} CPU-s / {cores} cores = "
            f"{use.sandbox / cores:.2f} s of both cores between the first model answer and the last "
            f"second round, even with a free API (the ratio target allows {0.3 * 2 * delay:.2f} s)"
        ]
        if use.sandbox > 0
        else []
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def bench_settings(base_url: str) -> Settings:
    model = fake_model(base_url, "gpt-4o-mini", provider="openai_compatible", api_style="responses")
    data_dir = tempfile.mkdtemp(prefix="qdash-bench-")
    return settings_on_fake(data_dir, {"fake": model}, logging={"level": "WARNING"})


def client_for(app: Any, streams: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=streams * 2)
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=120, limits=limits)


async def concurrent(
    client: httpx.AsyncClient,
    tokens: list[str],
    streams: int,
    probe: LagProbe,
    *,
    offset: int = 0,
    light: bool = False,
) -> tuple[float, list[float], list[float]]:
    """Wall time, per-stream times and loop lags of ``streams`` chat streams started together."""
    probe.start()
    started = time.perf_counter()
    per_stream = await asyncio.gather(
        *(one_stream(client, tokens[i % len(tokens)], offset + i, light) for i in range(streams))
    )
    return time.perf_counter() - started, list(per_stream), await probe.stop()


def ratio_line(
    label: str, alone: float, together: float, per_stream: list[float], streams: int, *, target: str = ""
) -> str:
    return (
        f"{label}: one alone {alone:.3f} s (median of 3), {streams} concurrent {together:.3f} s "
        f"(per stream p50 {pct(per_stream, 0.5):.3f} s, p99 {pct(per_stream, 0.99):.3f} s) "
        f"-> ratio {together / alone:.2f}{target}"
    )


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


@dataclass
class Verdicts:
    """One run's restated targets (module docstring), with the light turn's CPU floor beside it."""

    light_ratio: float
    heavy_ratio: float
    sandbox_floor: float
    lag_p99_ms: float
    light_cpu_floor: float
    light_cpu_ms: float
    """API process CPU per light turn (the concurrent light streams)."""
    layer_cpu_ms: float
    """The same for the API layer alone (scripted assistant): the baseline of ``light_cpu_ms``."""

    @property
    def excess(self) -> float:
        return self.heavy_ratio - self.sandbox_floor

    @property
    def light_cpu_ratio(self) -> float:
        return self.light_cpu_ms / self.layer_cpu_ms

    @property
    def met(self) -> bool:
        return self.light_ratio <= 1.3 and self.excess <= 0.3 and self.lag_p99_ms <= 50


def sandbox_floor(heavy: Phase) -> float:
    """The ratio the sandbox's CPU alone forces: its CPU-s spread over every core, on top of one
    stream's wall time (measured in this run; the fork cost of the zygote dominates it)."""
    return 1 + heavy.cpu.sandbox / (os.cpu_count() or 1) / heavy.alone


def cpu_floor(phase: Phase) -> float:
    """The ratio the CPU of the turn's own processes forces on this machine: the API process and the
    fake model's CPU-s spread over every core, on top of one stream's wall time. Work that needs
    more CPU-s than the cores give cannot hide in the model's waiting, however it is scheduled."""
    return 1 + (phase.cpu.process + phase.cpu.model) / (os.cpu_count() or 1) / phase.alone


def lag_line(label: str, lags: list[float], target: bool = False) -> str:
    p99 = pct(lags, 0.99) * 1000
    said = f" (target p99 <= 50 ms) {verdict(p99 <= 50)}" if target else ""
    return (
        f"event loop lag {label}: p50 {pct(lags, 0.5) * 1000:.1f} ms, p99 {p99:.1f} ms, "
        f"max {max(lags, default=0.0) * 1000:.1f} ms over {len(lags)} ticks{said}"
    )


@dataclass
class Phase:
    """One kind of turn: alone (median of 3) and ``streams`` at once, with the loop's lags and CPU."""

    alone: float
    together: float
    per_stream: list[float]
    lags: list[float]
    cpu: CpuUse


async def measure(
    c: httpx.AsyncClient,
    token: str,
    tokens: list[str],
    probe: LagProbe,
    cpu: CpuMeter,
    *,
    offset: int,
    light: bool,
) -> Phase:
    alone = statistics.median([await one_stream(c, token, -offset - i, light=light) for i in range(3)])
    cpu.start()
    together, per_stream, lags = await concurrent(c, tokens, len(tokens), probe, offset=offset, light=light)
    return Phase(alone, together, per_stream, lags, cpu.stop())


async def setup(base_url: str, streams: int) -> tuple[Any, Settings, str, list[str]]:
    """The demo lab in memory, indexed as the server does, plus one user per concurrent stream."""
    t0 = time.perf_counter()
    db = await asyncio.to_thread(open_database, DatabaseSettings(name="bench", embedded_persist=False))
    await asyncio.to_thread(ensure_indexes, db)  # as the server's start-up does (prepare_database)
    spec = DemoSpec.small(end_at=datetime.now(UTC).replace(minute=0, second=0, microsecond=0))
    token = (await asyncio.to_thread(seed_demo, db, spec)).token("alice")
    tokens = await asyncio.to_thread(add_users, db, streams)
    print(f"demo lab seeded in {time.perf_counter() - t0:.1f} s")
    settings = bench_settings(base_url)
    await start_sandbox(settings.sandbox)
    gc.freeze()  # as the server's lifespan does once its database is open (the ASGI client skips it)
    apply_thread_budget(settings, db)  # likewise: 4 threads for blocking work on the embedded store
    return db, settings, token, tokens


async def run(base_url: str, model_pid: int, streams: int, delay: float) -> Verdicts:
    db, settings, token, tokens = await setup(base_url, streams)
    app = create_app(settings, db=db)
    assistant = Assistant(db, settings)
    app.state.assistant = assistant
    probe, cpu, gc_pauses = LagProbe(), CpuMeter(model_pid), GcPauses()
    async with client_for(app, streams) as c:
        await one_stream(c, token, -1)  # warm-up: clients, pools, first sandbox worker
        await one_stream(c, token, -2, light=True)
        gc_pauses.start()
        heavy = await measure(c, token, tokens, probe, cpu, offset=10, light=False)
        gc_line = gc_pauses.stop()
        probe.start()
        tool_started = time.perf_counter()
        await asyncio.gather(*(tool_calls(c, tokens[i], i) for i in range(streams)))
        tools_wall = time.perf_counter() - tool_started
        tool_lags = await probe.stop()
        light = await measure(c, token, tokens, probe, cpu, offset=2000, light=True)
    await assistant.aclose()
    layer_app = create_app(settings, db=db)
    layer_app.state.assistant = SleepyAssistant(2 * delay)
    async with client_for(layer_app, streams) as c:
        layer = await measure(c, token, tokens, probe, cpu, offset=1000, light=False)
    return report(
        heavy, light, layer, tools=(tools_wall, tool_lags), gc_line=gc_line, streams=streams, delay=delay
    )


def report(
    heavy: Phase,
    light: Phase,
    layer: Phase,
    *,
    tools: tuple[float, list[float]],
    gc_line: str,
    streams: int,
    delay: float,
) -> Verdicts:
    result = Verdicts(
        light_ratio=light.together / light.alone,
        heavy_ratio=heavy.together / heavy.alone,
        sandbox_floor=sandbox_floor(heavy),
        lag_p99_ms=pct(heavy.lags, 0.99) * 1000,
        light_cpu_floor=cpu_floor(light),
        light_cpu_ms=light.cpu.process / streams * 1000,
        layer_cpu_ms=layer.cpu.process / streams * 1000,
    )
    print(f"machine: {os.cpu_count()} CPUs, load average (1 min) {os.getloadavg()[0]:.1f} (shared machine)")
    print(
        f"turn: 2 model rounds of {delay:.2f} s each (fake model in its own process); round 1 calls "
        "get_qubit_params (embedded store) and execute_python_analysis (sandbox) in parallel, "
        "round 2 is the final blocks answer"
    )
    heavy_target = (
        f"; sandbox floor {result.sandbox_floor:.2f} (measured), excess {result.excess:.2f} "
        f"(target <= 0.30) {verdict(result.excess <= 0.3)}"
    )
    print(
        ratio_line(
            "[A-heavy] chat streams",
            heavy.alone,
            heavy.together,
            heavy.per_stream,
            streams,
            target=heavy_target,
        )
    )
    print(
        "[B] " + lag_line("during the concurrent streams (tools + sandbox running)", heavy.lags, target=True)
    )
    print("    " + lag_line(f"during {streams} concurrent tool pairs (no model; {tools[0]:.2f} s)", tools[1]))
    for line in cpu_lines("of the concurrent streams", heavy.cpu, streams, delay):
        print("    " + line)
    print(f"    gc pauses during the concurrent streams: {gc_line}")
    label = "[A-light] light turn (2 model rounds, 1 data tool, no sandbox)"
    light_target = (
        f" (target <= 1.30) {verdict(result.light_ratio <= 1.3)}; CPU floor {result.light_cpu_floor:.2f} "
        "(API process + fake model CPU-s / cores, measured)"
    )
    print(ratio_line(label, light.alone, light.together, light.per_stream, streams, target=light_target))
    print("    " + lag_line("during the light concurrent streams", light.lags))
    for line in cpu_lines("of the light streams", light.cpu, streams, delay):
        print("    " + line)
    print(
        ratio_line(
            f"API layer alone (scripted assistant waiting {2 * delay:.1f} s)",
            layer.alone,
            layer.together,
            layer.per_stream,
            streams,
        )
        + f"; CPU {result.layer_cpu_ms:.1f} ms per stream"
    )
    print("    " + lag_line("during the API-layer-only streams", layer.lags))
    print(
        f"API process CPU per light turn: {result.light_cpu_ms:.1f} ms; the API layer alone "
        f"{result.layer_cpu_ms:.1f} ms (same run) -> ratio {result.light_cpu_ratio:.2f}"
    )
    return result


async def main(streams: int, delay: float, runs: int) -> None:
    configure_logging("WARNING", False)
    ctx = mp.get_context("fork")
    ready = ctx.Queue()
    child = ctx.Process(target=serve_fake, args=(delay, ready), daemon=True)
    child.start()
    results: list[Verdicts] = []
    try:
        base_url = ready.get(timeout=30)
        for number in range(1, runs + 1):
            print(f"--- run {number} of {runs}")
            results.append(await run(base_url, child.pid or 0, streams, delay))
            await stop_sandbox()  # each run starts its own pool, as a server start would
    finally:
        await stop_sandbox()
        child.terminate()
        child.join(5)
    summary(results)


def summary(results: list[Verdicts]) -> None:
    """The restated targets over all runs: each must hold in every run."""
    met = sum(r.met for r in results)
    print(f"--- restated targets over {len(results)} runs: all met in {met} of {len(results)}")
    print(
        "light ratio / CPU floor "
        + ", ".join(f"{r.light_ratio:.2f}/{r.light_cpu_floor:.2f}" for r in results)
        + " (target ratio <= 1.30)"
    )
    print(
        "heavy ratio / sandbox floor / excess "
        + ", ".join(f"{r.heavy_ratio:.2f}/{r.sandbox_floor:.2f}/{r.excess:.2f}" for r in results)
        + " (target excess <= 0.30)"
    )
    print("lag p99 ms " + ", ".join(f"{r.lag_p99_ms:.0f}" for r in results) + " (target <= 50)")
    print(
        "API process CPU ms per light turn / API layer alone / ratio "
        + ", ".join(f"{r.light_cpu_ms:.1f}/{r.layer_cpu_ms:.1f}/{r.light_cpu_ratio:.2f}" for r in results)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--delay", type=float, default=1.0, help="fake model seconds per round")
    parser.add_argument(
        "--runs", type=int, default=3, help="repeat the whole measurement (targets: every run)"
    )
    args = parser.parse_args()
    asyncio.run(main(args.streams, args.delay, args.runs))
