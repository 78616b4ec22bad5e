"""An exclusive lock on the embedded data directory, so one process owns its files.

Why: two processes journaling into one SQLite file would each keep their own in-memory copy and
silently overwrite each other's writes. ``fcntl.flock`` is released by the kernel when the process
dies (even on SIGKILL), so a crashed server never leaves a stale lock behind.

A server holding the lock also leaves ``embedded.server`` beside it (owner-only permissions): its
PID, URL and a random operator token. The CLI, refused by the lock, reads it to do its work
through that server's HTTP API instead (``qdash.remote``); whoever may read the data directory may
already read every document, so the token grants nothing new.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from qdash.db.errors import DatabaseInUseError

SERVER_FILE = "embedded.server"
SERVE_URL_ENV = "QDASH_SERVE_URL"
"""Set by ``qdash serve`` for its server process: the URL the CLI on this machine reaches it at."""


@dataclass(frozen=True)
class RunningServer:
    """The ``qdash serve`` process that holds the embedded store, as it recorded itself."""

    pid: int
    url: str
    token: str


def local_url(host: str, port: int) -> str:
    """The URL a process on this machine uses for a server bound to ``host`` (any-address → loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def advertise_server(data_dir: Path, url: str) -> RunningServer:
    """Record this process as the server of ``data_dir`` at ``url``, with a fresh operator token."""
    server = RunningServer(os.getpid(), url, secrets.token_urlsafe(32))
    path = data_dir / SERVER_FILE
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"pid": server.pid, "url": server.url, "token": server.token}, handle)
    return server


def withdraw_server(data_dir: Path) -> None:
    """Remove this process's record (at shutdown); a record of another process stays."""
    found = read_server(data_dir)
    if found is not None and found.pid == os.getpid():
        (data_dir / SERVER_FILE).unlink(missing_ok=True)


def read_server(data_dir: Path, pid: int | None = None) -> RunningServer | None:
    """The recorded server (of lock owner ``pid`` when given), or ``None`` if absent or stale."""
    try:
        data = json.loads((data_dir / SERVER_FILE).read_text(encoding="utf-8"))
        server = RunningServer(int(data["pid"]), str(data["url"]), str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return server if pid is None or server.pid == pid else None


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
