"""Start-up time and memory of ``qdash serve`` on the embedded store: first start (empty → demo seed)
and restarts on the same data.

Run: ``python bench/serve_startup.py [--data-dir DIR] [--restarts 2]``. Spawns the real CLI, polls
``/health`` until it answers 200, reads the server's RSS (``VmRSS``) and whether matplotlib was
imported, stops the server with SIGINT (clean shutdown), and repeats on the same data directory; then
once more with ``embedded_persist: false`` (nothing on disk, nothing seeded). Prints the ratio
restart RSS / first-start RSS (target ≤ 1.10: a restart holds the same documents as the first start).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def start_and_wait(
    env: dict[str, str], timeout_s: float = 900
) -> tuple[float, float, float, dict[str, object]]:
    """Seconds until /health answers, CPU seconds of the server's whole life, its RSS (MiB) once
    ready, and the health body."""
    port = free_port()
    cpu_before = children_cpu_s()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "qdash.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while time.perf_counter() - started < timeout_s:
            if proc.poll() is not None:
                raise RuntimeError(f"qdash serve exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    body = json.loads(response.read())
                    elapsed = time.perf_counter() - started
                    rss = rss_mib(proc.pid)
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise TimeoutError("no /health answer")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    return elapsed, children_cpu_s() - cpu_before, rss, body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--restarts", type=int, default=2)
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="qdash-bench-"))
    env = {**os.environ, "QDASH_DATA_DIR": str(data_dir), "QDASH_LOGGING__LEVEL": "WARNING"}
    env.pop("QDASH_MONGO_URI", None)
    runs = [("first start (empty data dir, seeds the demo lab)", env)]
    runs += [(f"restart {i + 1} (journal present, loaded at start)", env) for i in range(args.restarts)]
    memory = {
        **env,
        "QDASH_DATABASE__EMBEDDED_PERSIST": "false",
        "QDASH_DATABASE__SEED_DEMO_ON_EMPTY": "false",
    }
    runs.append(("in memory, no seed (process + imports: the floor)", memory))
    rss_by_run = []
    for label, run_env in runs:
        seconds, cpu, rss, body = start_and_wait(run_env)
        rss_by_run.append(rss)
        print(
            f"{label:<52} {seconds:7.2f} s wall  {cpu:7.2f} s CPU  {rss:7.1f} MiB RSS  {body.get('status')}"
        )
    worst_restart = max(rss_by_run[1:-1], default=rss_by_run[0])
    print(f"restart RSS / first-start RSS: {worst_restart / rss_by_run[0]:.2f} [target <= 1.10]")
    print(f"journal: {(data_dir / 'embedded.sqlite3').stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
