"""Start-up time of the ``qdash`` command: what a user waits for before any work begins.

Run: ``python bench/cli_start.py [--repeat 5] [--only sandbox]``. Spawns each command ``--repeat``
times (``--only``: only the commands whose label contains it, beside the floor) in a fresh
interpreter (on an empty, in-memory configuration, so no store is opened from disk) and prints the
median and best wall time beside ``python -c pass`` measured in the same run: the interpreter's own
start, the floor no import change can go under. CPU seconds (the command and its children, e.g. the
sandbox worker) are printed too: on a loaded machine they vary far less than wall time. Targets:
``qdash --help`` ≤ 0.3 s, a trivial ``qdash sandbox run`` ≤ 1.0 s.

Measured (``--repeat 3``, 2 cores at load average 11-14, so wall times are inflated several-fold;
the CPU column is the steadier one), before → after the commands' modules were imported on use:

    command                      wall median       CPU median
    python -c pass               0.28 s → 0.27 s   0.03 s → 0.04 s
    qdash --help                 50.3 s → 2.09 s   5.57 s → 0.29 s
    qdash tools list             34.9 s → 31.3 s   3.49 s → 3.42 s
    qdash sandbox run (1 + 1)    24.9 s → 19.5 s   4.16 s → 3.62 s
    qdash eval --list            38.4 s → 11.1 s   5.86 s → 1.28 s

Of ``sandbox run``'s CPU the command's own imports (typer, settings, logging, the sandbox client)
are ~1 s here; the rest is the sandbox's start: the zygote imports numpy, pandas and plotly and runs
the warm-up analyses before the first fork (``qdash/sandbox/warmup.py``). ``tools list`` loads the
tool catalogue and the database.

Then ``sandbox run`` got a one-shot pool (no spares, no prefault, and for code that imports none
of numpy, pandas and plotly only the standard-library warm-up; the zygote no longer imports the
client's settings and logging through ``qdash.sandbox``). ``--repeat 3 --only sandbox``, load
average 10, before → after:

    command                      wall median       CPU median
    python -c pass               0.03 s → 0.05 s   0.02 s → 0.02 s
    qdash sandbox run (1 + 1)    8.30 s → 2.63 s   3.78 s → 1.05 s

What is left (~1 s CPU at this load) is mostly the command's own imports (typer, pydantic settings,
structlog with rich); the zygote's imports are ~0.3 s of it (``python -X importtime``). The API
server's pool is unchanged: ``bench/sandbox.py --trivial 50 --runs 5 --spawn-runs 2`` (load 6-7),
two before/after pairs: ratio spawn/zygote 70.3x → 37.6x, then 56.7x → 58.5x; warm realistic p50
77.6 → 105.5 ms, then 73.7 → 61.8 ms (noise at this load; the spawned interpreter also starts
faster now, which lowers the ratio's numerator). The zygote's RSS fell 168.5 → 149.3 MiB.

Then three causes went: interpreter shutdown ran full garbage collections over everything the
imports made (``qdash.cli:main`` freezes the heap once the command is done); pydantic re-parsed
``settings.py``'s source for attribute docstrings (now ``Field(description=…)``); ``tools list``
loaded openai through ``qdash.engine``'s re-exports and pymongo for two annotations. ``--repeat 3``,
load average 10.5-11.6, before (main at bb3058d, through ``PYTHONPATH``) → after, two rounds each:

    command                      wall median                   CPU median
    python -c pass               0.12, 0.09 s → 0.13, 0.14 s   0.03, 0.03 s → 0.04, 0.04 s
    qdash --help                 0.79, 0.84 s → 0.66, 0.79 s   0.22, 0.24 s → 0.19, 0.22 s
    qdash tools list             11.3, 11.6 s → 4.3, 4.7 s     3.20, 3.33 s → 1.21, 1.45 s
    qdash sandbox run (1 + 1)    4.67, 4.73 s → 3.29, 4.46 s   1.29, 1.40 s → 0.93, 1.23 s
    qdash eval --list            5.82, 5.06 s → 3.71, 3.90 s   1.63, 1.56 s → 1.10, 1.15 s

What ``sandbox run`` still spends is imports: typer, pydantic with pydantic-settings, structlog
(which imports rich when it is installed) and asyncio, ~0.1-0.2 s CPU each at this load.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QDASH = [sys.executable, "-m", "qdash.cli"]
SNIPPET = "result = 1 + 1"


def commands(snippet: Path) -> list[tuple[str, list[str], float | None]]:
    """(label, argv, target seconds); the first is the floor."""
    return [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("qdash --help", [*QDASH, "--help"], 0.3),
        ("qdash tools list", [*QDASH, "tools", "list"], None),
        (f"qdash sandbox run ({SNIPPET})", [*QDASH, "sandbox", "run", str(snippet)], 1.0),
        ("qdash eval --list", [*QDASH, "eval", "--list"], None),
    ]


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its children) from spawn to exit; a command that fails
    stops the benchmark (its timing is no use)."""
    cpu_before = children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {done.returncode}: {done.stderr[-2000:]}")
    return elapsed, children_cpu_s() - cpu_before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="time only the commands whose label contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="qdash-bench-cli-") as scratch:
        env = {
            **os.environ,
            "QDASH_CONFIG_DIR": scratch,
            "QDASH_DATA_DIR": scratch,
            "QDASH_DATABASE__EMBEDDED_PERSIST": "false",
            "QDASH_LOGGING__LEVEL": "WARNING",
        }
        env.pop("QDASH_MONGO_URI", None)
        env.pop("QDASH_SERVE_URL", None)
        snippet = Path(scratch) / "snippet.py"
        snippet.write_text(SNIPPET + "\n", encoding="utf-8")
        floor_run, *others = commands(snippet)
        runs = [floor_run, *(run for run in others if args.only in run[0])]
        for _, argv, _ in runs:  # warm the page cache and .pyc files: later runs are all alike
            timed(argv, env)
        floor = 0.0
        for label, argv, target in runs:
            walls, cpus = zip(*(timed(argv, env) for _ in range(args.repeat)), strict=True)
            median = statistics.median(walls)
            floor = floor or median
            goal = f"  [target <= {target:.1f} s]" if target is not None else ""
            print(
                f"{label:<36} wall median {median:6.3f} s  best {min(walls):6.3f} s  "
                f"{median / floor:6.1f}x python -c pass  CPU median {statistics.median(cpus):6.3f} s{goal}"
            )


if __name__ == "__main__":
    main()
