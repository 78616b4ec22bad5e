"""An exclusive lock on the embedded data directory, so one process owns its files.

Why: two processes journaling into one SQLite file would each keep their own in-memory copy and
silently overwrite each other's writes. ``fcntl.flock`` is released by the kernel when the process
dies (even on SIGKILL), so a crashed server never leaves a stale lock behind.

A server holding the lock also leaves its record beside it (``server_record.py``); the refusal then
names the server, and carries the record for the CLI.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from qdash.db.errors import DatabaseInUseError
from qdash.db.server_record import read_server


class DataDirLock:
    """Holds ``<data_dir>/embedded.lock`` exclusively; the file records the owner's PID."""

    FILE_NAME = "embedded.lock"

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / self.FILE_NAME
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            server = read_server(data_dir, int(owner)) if owner.isdigit() else None
            held_by = f"PID {owner}" + (f" (qdash serve at {server.url})" if server else "")
            raise DatabaseInUseError(
                f"the embedded database is in use by {held_by}; use a mongodb:// URI for "
                f"multi-process set-ups (lock file: {self.path})",
                server=server,
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        """Unlock and close (idempotent); the file stays, holding no lock."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
