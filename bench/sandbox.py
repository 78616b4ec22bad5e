"""Sandbox benchmark (docs/sandbox.md, Measured): run ``python bench/sandbox.py``.

Prints, in one run: cold start; warm p50/p95 for a trivial call and for realistic analyses; the
same analyses in-process (overhead) and by spawning a fresh, equally locked-down interpreter per
call (the ratio); 4 concurrent calls; and a soak of 1,000 mixed calls (zombies, zygote RSS growth,
API RSS). Calls are spaced like the reference measurement (50 ms apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from qdash.sandbox import SandboxPool
from qdash.sandbox.client import ZYGOTE_ENV, options_from_settings
from qdash.sandbox.protocol import WorkerOptions
from qdash.sandbox.worker import execute
from qdash.settings import SandboxSettings

TRIVIAL = 'result = {"output": 1}'

ROWS = [
    {
        "qid": str(q),
        "t1": 40.0 + q + (d % 7) * 0.5,
        "t2_echo": 60.0 + q * 0.3 + (d % 5),
        "calibrated_at": f"2024-03-{1 + d % 28:02d}T{d % 24:02d}:00:00+00:00",
    }
    for q in range(16)
    for d in range(20)
]

ANALYSES: dict[str, str] = {
    "stats": (
        "import statistics\nimport numpy as np\nv = [r['t1'] for r in data['t1']]\n"
        "result = {'output': {'mean': statistics.mean(v), 'median': statistics.median(v), "
        "'p95': float(np.percentile(v, 95)), 'std': float(np.std(v))}}"
    ),
    "polyfit": (
        "import numpy as np\nimport pandas as pd\ndf = pd.DataFrame(data['t1'])\n"
        "df['t'] = pd.to_datetime(df['calibrated_at'])\nx = (df['t'] - df['t'].min()).dt.total_seconds()\n"
        "slope, icpt = np.polyfit(x, df['t1'], 1)\nprint(f'trend {slope * 86400:.4f} us/day')"
    ),
    "groupby": (
        "import pandas as pd\ndf = pd.DataFrame(data['t1'])\n"
        "g = df.groupby('qid')[['t1', 't2_echo']].agg(['mean', 'std']).round(3)\n"
        "print(g.to_string())"
    ),
    "datetime": (
        "import pandas as pd\nimport datetime\ndf = pd.DataFrame(data['t1'])\n"
        "df['day'] = pd.to_datetime(df['calibrated_at']).dt.strftime('%Y-%m-%d')\n"
        "d = datetime.datetime.strptime('2024-03-01', '%Y-%m-%d').strftime('%d %b')\n"
        "print(d, df.groupby('day')['t1'].mean().tail(3).to_dict())"
    ),
    "plotly": (
        "import pandas as pd\nimport plotly.graph_objects as go\ndf = pd.DataFrame(data['t1'])\n"
        "fig = go.Figure()\nfor q, part in df.groupby('qid'):\n"
        "    fig.add_trace(go.Scatter(x=part['calibrated_at'], y=part['t1'], name='Q' + q))\n"
        "fig.update_layout(title='T1 over time', yaxis_title='T1 (us)')\n"
        "result = {'output': 'plotted', 'chart': fig}"
    ),
    "subplots": (
        "import pandas as pd\nfrom plotly.subplots import make_subplots\nimport plotly.graph_objects as go\n"
        "df = pd.DataFrame(data['t1'])\nfig = make_subplots(rows=1, cols=2, subplot_titles=('T1', 'T2'))\n"
        "fig.add_trace(go.Histogram(x=df['t1']), row=1, col=1)\n"
        "fig.add_trace(go.Box(y=df['t2_echo']), row=1, col=2)\n"
        "result = {'output': 'two panels', 'chart': fig}"
    ),
}

MIXED_EXTRA = [
    "import os",
    "x = 'x' * (6 * 1024 ** 3)",
    "while True:\n    print('x' * 1000)",
    "import numpy as np\nnp.load('x')",
]

SPAWN_SCRIPT = r"""
import json, os, sys, tempfile
from qdash.sandbox import lockdown
from qdash.sandbox.protocol import WorkerOptions
from qdash.sandbox.worker import execute
from qdash.sandbox.policy import preimport
options = WorkerOptions.from_json(sys.argv[1])
request = sys.stdin.buffer.read()
preimport()  # imports must happen before the uid switch and Landlock, as in the zygote
lockdown.apply(options.lockdown, sys.argv[2])
sys.stdout.buffer.write(execute(request, options))
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fmt(values: list[float]) -> str:
    return f"p50 {pct(values, 0.5):7.1f} ms  p95 {pct(values, 0.95):7.1f} ms  (n={len(values)})"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def zygote_children(pid: int) -> tuple[int, int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    zombies = 0
    for child in children:
        stat = Path(f"/proc/{child}/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            zombies += 1
    return len(children), zombies


async def timed(pool: SandboxPool, code: str, data: dict[str, Any]) -> float:
    started = time.perf_counter()
    reply = await pool.run(code, data)
    elapsed = (time.perf_counter() - started) * 1000
    if reply.error is not None and code in (TRIVIAL, *ANALYSES.values()):
        raise SystemExit(f"benchmark code failed: {reply.error}")
    return elapsed


def spawn_once(options: WorkerOptions, request: bytes) -> float:
    with tempfile.TemporaryDirectory() as call_dir:
        if os.geteuid() == 0:
            os.chown(call_dir, options.lockdown.uid, options.lockdown.uid)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-I", "-c", SPAWN_SCRIPT, options.to_json(), call_dir],
            input=request,
            capture_output=True,
            env=dict(ZYGOTE_ENV),
            cwd="/",
            timeout=60,
            check=False,
        )
        elapsed = (time.perf_counter() - started) * 1000
    reply = json.loads(done.stdout or b"{}")
    if reply.get("error"):
        raise SystemExit(f"spawn-per-call failed: {reply['error']} {done.stderr[-500:]!r}")
    return elapsed


async def bench_latency(pool: SandboxPool, settings: SandboxSettings, args: argparse.Namespace) -> None:
    """T3, T4 and the spawn-per-call comparison."""
    data, gap = {"t1": ROWS}, args.gap_ms / 1000
    trivial: list[float] = []
    for _ in range(args.trivial):
        trivial.append(await timed(pool, TRIVIAL, {}))
        await asyncio.sleep(gap)
    print(f"warm trivial           : {fmt(trivial)}   [target p50 <= 10, p95 <= 30]")
    realistic: list[float] = []
    inproc: list[float] = []
    opts = options_from_settings(settings)
    for name, code in ANALYSES.items():
        per: list[float] = []
        for _ in range(args.runs):
            per.append(await timed(pool, code, data))
            await asyncio.sleep(gap)
        request = json.dumps({"code": code, "data": data}).encode()
        for _ in range(args.runs):
            t0 = time.perf_counter()
            execute(request, opts)
            inproc.append((time.perf_counter() - t0) * 1000)
        realistic.extend(per)
        print(f"  {name:<20s} : {fmt(per)}")
    print(f"warm realistic (all)   : {fmt(realistic)}   [target p50 <= 30, p95 <= 100]")
    overhead = pct(realistic, 0.5) - pct(inproc, 0.5)
    print(f"in-process, no isolation: {fmt(inproc)}; sandbox overhead at p50 {overhead:.1f} ms [<= 25]")
    spawn: list[float] = []
    for code in ANALYSES.values():
        request = json.dumps({"code": code, "data": data}).encode()
        spawn.extend(spawn_once(opts, request) for _ in range(args.spawn_runs))
    ratio = pct(spawn, 0.5) / pct(realistic, 0.5)
    print(f"spawn-per-call, same lockdown: {fmt(spawn)}")
    print(f"ratio spawn/zygote at p50: {ratio:.1f}x   [target >= 5x]")


async def bench_concurrency(pool: SandboxPool, args: argparse.Namespace) -> None:
    """T11: four calls at once against one at a time."""
    data = {"t1": ROWS}
    single = [await timed(pool, ANALYSES["groupby"], data) for _ in range(20)]
    concurrent: list[float] = []
    for _ in range(args.concurrent_rounds):
        concurrent.extend(await asyncio.gather(*(timed(pool, ANALYSES["groupby"], data) for _ in range(4))))
        await asyncio.sleep(args.gap_ms / 1000)
    print(f"single groupby call    : {fmt(single)}")
    print(
        f"4 concurrent calls     : {fmt(concurrent)}; "
        f"p95 ratio {pct(concurrent, 0.95) / pct(single, 0.95):.2f}x [<= 3x]"
    )


async def bench_soak(pool: SandboxPool, settings: SandboxSettings, args: argparse.Namespace) -> None:
    """T10: mixed calls back to back; zombies and memory growth."""
    zygote = pool.zygote_pid
    assert zygote is not None
    await asyncio.sleep(0.3)
    zygote_before, api_before = rss_kib(zygote), rss_kib(os.getpid())
    mixed = [TRIVIAL, *ANALYSES.values(), *MIXED_EXTRA]
    soak_started = time.perf_counter()
    errors = 0
    for i in range(args.soak):
        reply = await pool.run(mixed[i % len(mixed)], {"t1": ROWS})
        errors += reply.error is not None
    soak_s = time.perf_counter() - soak_started
    await asyncio.sleep(0.5)
    zygote_after, api_after = rss_kib(zygote), rss_kib(os.getpid())
    children, zombies = zygote_children(zygote)
    growth = 100 * (zygote_after - zygote_before) / zygote_before
    print(
        f"soak: {args.soak} mixed calls in {soak_s:.1f} s ({errors} expected errors); "
        f"zombies {zombies}; live children {children} (spares {settings.spares})"
    )
    print(
        f"zygote RSS {zygote_before / 1024:.1f} -> {zygote_after / 1024:.1f} MiB ({growth:+.1f} %) "
        f"[< 10 %]; API RSS {api_before / 1024:.1f} -> {api_after / 1024:.1f} MiB"
    )


async def main(args: argparse.Namespace) -> None:
    settings = SandboxSettings(restart_every=100_000, prefault=not args.no_prefault, spares=args.spares)
    load = os.getloadavg()[0]
    print(
        f"sandbox benchmark: {os.cpu_count()} cores (load avg {load:.1f}), "
        f"python {sys.version.split()[0]}, gap {args.gap_ms} ms, prefault {settings.prefault}, "
        f"spares {settings.spares}"
    )
    pool = SandboxPool(settings)
    started = time.perf_counter()
    await pool.start()
    cold = (time.perf_counter() - started) * 1000
    first = await timed(pool, TRIVIAL, {})
    print(f"cold start (spawn -> ready): {cold:.0f} ms; first call after it: {first:.1f} ms")
    print(f"layers: {pool.layers}")
    try:
        await bench_latency(pool, settings, args)
        await bench_concurrency(pool, args)
        await bench_soak(pool, settings, args)
    finally:
        await pool.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trivial", type=int, default=200)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--spawn-runs", type=int, default=3)
    parser.add_argument("--concurrent-rounds", type=int, default=25)
    parser.add_argument("--soak", type=int, default=1000)
    parser.add_argument("--gap-ms", type=float, default=50.0)
    parser.add_argument("--no-prefault", action="store_true", help="spares skip the trusted pre-run")
    parser.add_argument("--spares", type=int, default=SandboxSettings().spares)
    asyncio.run(main(parser.parse_args()))
