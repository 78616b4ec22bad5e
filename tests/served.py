"""A real ``qdash serve`` subprocess on a small demo lab, as the README's first command runs it.

No ``OPENAI_API_KEY`` reaches it (and nothing listens on Ollama's port in tests), so the server
chooses the demo model itself, exactly as on a fresh install.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from qdash.db import close_database, open_database
from qdash.db.lock import DataDirLock
from qdash.demo import DemoSpec, seed_demo
from qdash.demo.spec import ChipPlan
from qdash.settings import DatabaseSettings
from tests.test_cli import _closed_port

SHARED_MONGO_URI = os.environ.get("QDASH_TEST_MONGO_URI", "")
LOOPBACK = httpx.Client(timeout=30, limits=httpx.Limits(max_keepalive_connections=0))
"""The tests' HTTP client for servers on this machine. Why one: ``httpx.get`` builds a client, with its
TLS context, per call (~50 ms of CPU), and loops that poll a server make hundreds of calls. It keeps no
connection open, since the servers behind a port come and go."""


@contextmanager
def shared_store_uri(store_dir: Path) -> Iterator[str]:
    """The URI of a store several server processes can use: the real MongoDB at
    ``QDASH_TEST_MONGO_URI`` when it is set, else the test double ``python -m tests.support.wire_store``
    in a subprocess over ``store_dir`` (stopped with SIGTERM, which must exit cleanly and release
    the lock). Callers use a database name of their own."""
    if SHARED_MONGO_URI:
        yield SHARED_MONGO_URI
        return
    env = {**os.environ, "QDASH_DATABASE__DATA_DIR": str(store_dir)}
    env.pop("QDASH_MONGO_URI", None)
    env["QDASH_DATABASE__SEED_DEMO_ON_EMPTY"] = "false"
    store = subprocess.Popen(
        [sys.executable, "-m", "tests.support.wire_store", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert store.stdout is not None
        line = store.stdout.readline().strip()  # "QDASH_MONGO_URI=mongodb://127.0.0.1:<port>"
        assert line.startswith("QDASH_MONGO_URI=mongodb://127.0.0.1:"), f"store server said {line!r}"
        yield line.partition("=")[2]
    finally:
        store.terminate()
        assert store.wait(20) == 0
        DataDirLock(store_dir).release()  # released by the clean shutdown


def one_chip_lab(days: int) -> DemoSpec:
    """The demo lab cut to alice's 64-qubit chip: ~1 s per calibration day to seed."""
    chip = ChipPlan("proj-demo", "64Qv3", "square-lattice-mux-64", "alice", days, 45, bring_up=days > 1)
    return DemoSpec(seed=7, scale="small", chips=(chip,))


SEEDED_LABS: list[Path] = []
"""The folder of :func:`seed_lab`'s seeded stores, one per test session (set by tests/conftest.py)."""


def seed_lab(data_dir: Path, spec: DemoSpec) -> None:
    """Write the demo lab of ``spec`` into ``data_dir`` as a persisted embedded store (database ``qdash``).

    Why a copy: several modules start processes on the same lab (each needs its own store, since the
    processes write), and seeding takes seconds of CPU (~4 s the review lab). Each spec is seeded once
    per session into ``SEEDED_LABS`` (xdist workers share it; a lock file lets one seed while the
    others wait) and its store file copied to ``data_dir``: an independent store, as if seeded there.
    """
    assert SEEDED_LABS, "the session's seeded-lab folder is set by tests/conftest.py"
    seeded = SEEDED_LABS[0] / hashlib.sha256(repr(spec).encode()).hexdigest()[:16]
    seeded.mkdir(parents=True, exist_ok=True)
    with open(seeded / "seeding.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        store = seeded / "store"
        if not store.exists():
            db = open_database(DatabaseSettings(data_dir=seeded / "seeding", embedded_warn_documents=10**9))
            try:
                seed_demo(db, spec)
            finally:
                close_database(db)
            (seeded / "seeding").rename(store)  # complete, closed (its journal checkpointed)
    data_dir.mkdir(parents=True, exist_ok=True)
    for file in store.iterdir():
        if file.name != DataDirLock.FILE_NAME:
            shutil.copy2(file, data_dir / file.name)


def cli_env(data_dir: Path) -> dict[str, str]:
    """The environment of a fresh install: no API key, the data dir given."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, "QDASH_DATA_DIR": str(data_dir), "QDASH_DATABASE__EMBEDDED_WARN_DOCUMENTS": "1000000000"}


def run_qdash(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``qdash ARGS`` in a subprocess with ``env``, its output captured (a CLI beside a server)."""
    return subprocess.run(
        [sys.executable, "-m", "qdash.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@contextmanager
def serve_process(
    data_dir: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """``qdash serve`` until /health answers; yields (port, process): a test may kill it. SIGINT at
    the end unless it has exited. ``env``: the environment (default: a fresh install's on ``data_dir``)."""
    port = _closed_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "qdash.cli", "serve", "--port", str(port)],
        env=env if env is not None else cli_env(data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                    break
            except OSError:
                time.sleep(0.2)
        assert proc.poll() is None, "qdash serve exited during start-up"
        yield port, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


@contextmanager
def served(data_dir: Path) -> Iterator[int]:
    """``qdash serve`` on ``data_dir`` until /health answers; yields the port; SIGINT at the end."""
    with serve_process(data_dir) as (port, _process):
        yield port
